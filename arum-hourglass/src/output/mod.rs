//! Renderings of a run: tagged text lines for people and scripts, JSON with everything, and the
//! execution trace of a window drawn as SVG. Each is a string; the caller writes it.

pub mod json;
pub mod svg;
pub mod text;
