//! What every renderer shares: the text report's column layout (`grid`), its sections and rows
//! (`text`), and the HTML page's elements and plots (`html`).

pub mod grid;
pub mod html;
pub mod text;
