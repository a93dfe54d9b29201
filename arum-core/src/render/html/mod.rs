//! The HTML page's building blocks: elements (`page`) and plots as inline SVG (`plot`).

pub mod page;
pub mod plot;
