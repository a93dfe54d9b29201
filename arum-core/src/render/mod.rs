//! What every renderer shares: the text report's sections and rows (`text`, on `arum_grid`'s
//! column layout), and the HTML page's elements and plots (`html`).

pub mod fold;
pub mod html;
#[cfg(test)]
pub mod testing;
pub mod text;
