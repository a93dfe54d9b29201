//! The page around the sections: one HTML document with its style inlined (nothing is fetched
//! when it is viewed), and the small builders every section uses: escaping, collapsible
//! sections, tables, lists.

use std::fmt::Write;

const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}\
h1{font-size:1.4em;margin-bottom:.2em}\
details.section{border:1px solid #ccc;border-radius:4px;margin:.8em 0;padding:.3em .8em}\
details.section>summary{font-weight:bold;font-size:1.15em;cursor:pointer;padding:.2em 0}\
details.item{margin:.4em 0 .4em 1em}\
details.item>summary{cursor:pointer}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.15em .5em;text-align:right}\
th{background:#f3f3f3}\
td.l,th.l{text-align:left}\
.plot{margin:.5em 0}\
.plot svg{max-width:100%;height:auto}\
ul.notes li{margin:.2em 0}\
.warn{color:#a40}\
.muted{color:#777}";

/// The whole document: `title` as the page's title and heading, `lead` under it, then the
/// sections.
pub fn document(title: &str, lead: &str, sections: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"generator\" content=\"arum {version}\">\n<title>{t}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n{lead}\n{sections}</body>\n</html>\n",
        version = esc(crate::version::VERSION),
        t = esc(title),
    )
}

/// Text made safe to put in an element or an attribute.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A top-level section, open, with `id` for links and checks.
pub fn section(id: &str, title: &str, body: &str) -> String {
    format!(
        "<details class=\"section\" id=\"{}\" open>\n<summary>{}</summary>\n{body}</details>\n",
        esc(id),
        esc(title)
    )
}

/// A collapsed part of a section (one function, one benchmark's metric).
pub fn item(title: &str, body: &str) -> String {
    format!(
        "<details class=\"item\">\n<summary>{}</summary>\n{body}</details>\n",
        esc(title)
    )
}

/// A part of a section shown open, which may hold collapsed items of its own (a level of a
/// hierarchy).
pub fn branch(title: &str, body: &str) -> String {
    format!(
        "<details class=\"item\" open>\n<summary>{}</summary>\n{body}</details>\n",
        esc(title)
    )
}

/// A table; the first column is text (left-aligned), the others are values. Cells are escaped.
pub fn table<S: AsRef<str>>(headers: &[&str], rows: &[Vec<S>]) -> String {
    let mut out = String::from("<table>\n<tr>");
    for (i, h) in headers.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", left(i), esc(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", left(i), esc(cell.as_ref()));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn left(column: usize) -> &'static str {
    if column == 0 {
        " class=\"l\""
    } else {
        ""
    }
}

/// Name and value pairs as a two-column table.
pub fn facts(pairs: &[(&str, String)]) -> String {
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .map(|(k, v)| vec![(*k).to_string(), v.clone()])
        .collect();
    table(&["", ""], &rows).replacen("<tr><th class=\"l\"></th><th></th></tr>\n", "", 1)
}

/// Lines as a list; `class` styles it (`notes`, `notes warn`).
pub fn list<S: AsRef<str>>(class: &str, lines: &[S]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!("<ul class=\"{class}\">\n");
    for l in lines {
        let _ = writeln!(out, "<li>{}</li>", esc(l.as_ref()));
    }
    out.push_str("</ul>\n");
    out
}

/// A paragraph of text.
pub fn para(text: &str) -> String {
    format!("<p>{}</p>\n", esc(text))
}

/// A drawn plot (SVG from plot.rs), or the reason it could not be drawn.
pub fn figure(svg: Result<String, String>) -> String {
    match svg {
        Ok(svg) => format!("<div class=\"plot\">{svg}</div>\n"),
        Err(e) => format!("<p class=\"warn\">plot not drawn: {}</p>\n", esc(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn tables_escape_their_cells() {
        let t = table(&["name", "n"], &[vec!["<b>", "1"]]);
        assert!(
            t.contains("<td class=\"l\">&lt;b&gt;</td><td>1</td>"),
            "{t}"
        );
        let f = facts(&[("wall", "1 s".into())]);
        assert!(!f.contains("<th"), "{f}");
        assert!(f.contains("<td class=\"l\">wall</td><td>1 s</td>"), "{f}");
    }
}
