//! The JSON rendering: the calibration as serde writes it (`arum.calibration/1`).

use crate::model::Calibration;

pub fn render(cal: &Calibration) -> String {
    let mut s = serde_json::to_string_pretty(cal).expect("a calibration serialises");
    s.push('\n');
    s
}
