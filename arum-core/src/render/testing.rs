//! What the tests of the text renderers share: finding the line a reader would look for, with
//! the column alignment taken out so that a test states the words and figures, not the padding.

/// The lines of `text`, each with its indentation dropped and its runs of spaces made one.
pub fn collapsed(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The first line of `text` that starts with `start`, collapsed (see [`collapsed`]); panics
/// with the whole text when there is none.
pub fn line(text: &str, start: &str) -> String {
    collapsed(text)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start:?} in:\n{text}"))
}

/// Whether some collapsed line of `text` starts with `start`.
pub fn has_line(text: &str, start: &str) -> bool {
    collapsed(text).any(|l| l.starts_with(start))
}

/// The number of the first collapsed line of `text` that starts with `start`; panics when none.
pub fn line_number(text: &str, start: &str) -> usize {
    collapsed(text)
        .position(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start:?} in:\n{text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_by_their_start_without_the_padding() {
        let text = "\nTitle\n  name    value   unit\n  other   2\n";
        assert_eq!(line(text, "name value"), "name value unit");
        assert_eq!(line_number(text, "other"), 3);
        assert!(has_line(text, "Title") && !has_line(text, "value"));
    }
}
