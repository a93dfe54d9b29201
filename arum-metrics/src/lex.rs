//! Tokens, matched as perf's scanner does: the longest match wins, and on a tie keywords come
//! before numbers, numbers before identifiers.

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Num(f64),
    /// An identifier with its escapes removed and `?` replaced by the runtime parameter.
    Id(String),
    /// `#name`, without the `#`.
    Literal(String),
    Kw(Keyword),
    Op(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    DRatio,
    Max,
    Min,
    If,
    Else,
    SourceCount,
    AggrNr,
    HasEvent,
    StrcmpCpuidStr,
    NaN,
}

const KEYWORDS: &[(&str, Keyword)] = &[
    ("d_ratio", Keyword::DRatio),
    ("max", Keyword::Max),
    ("min", Keyword::Min),
    ("if", Keyword::If),
    ("else", Keyword::Else),
    ("source_count", Keyword::SourceCount),
    ("aggr_nr", Keyword::AggrNr),
    ("has_event", Keyword::HasEvent),
    ("strcmp_cpuid_str", Keyword::StrcmpCpuidStr),
    ("NaN", Keyword::NaN),
];

fn sym_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'@' | b'?')
}

/// Length of the identifier at the start of `s`: symbol characters and `\-` `\,` `\=`.
/// Between a PMU's `@`s, `=` `,` `-` need no escape (`msr@tsc\,cpu=cpu_atom@`, as the metric
/// files write it and perf's metric.py rewrites it before perf's own scanner sees it).
fn symbol_len(s: &[u8]) -> usize {
    let mut i = 0;
    let mut ats = 0;
    while i < s.len() {
        let inside_pmu = ats % 2 == 1 && s[i + 1..].contains(&b'@');
        if s[i] == b'@' {
            ats += 1;
            i += 1;
        } else if sym_char(s[i]) || inside_pmu && matches!(s[i], b'=' | b',' | b'-') {
            i += 1;
        } else if s[i] == b'\\' && i + 1 < s.len() && matches!(s[i + 1], b'-' | b',' | b'=') {
            i += 2;
        } else {
            break;
        }
    }
    i
}

/// Length of the number at the start of `s`: `([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?`.
fn number_len(s: &[u8]) -> usize {
    let digits = |from: usize| s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(0);
    let mut i = int;
    if i < s.len() && s[i] == b'.' {
        let frac = digits(i + 1);
        if int == 0 && frac == 0 {
            return 0;
        }
        i += 1 + frac;
    } else if int == 0 {
        return 0;
    }
    if i < s.len() && s[i] == b'e' {
        let sign = usize::from(i + 1 < s.len() && s[i + 1] == b'-');
        let exp = digits(i + 1 + sign);
        if exp > 0 {
            i += 1 + sign + exp;
        }
    }
    i
}

fn literal_len(s: &[u8]) -> usize {
    if s.first() != Some(&b'#') {
        return 0;
    }
    let n = s[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        .count();
    if n == 0 {
        0
    } else {
        n + 1
    }
}

/// Splits an expression into tokens; characters that start no token are skipped, as perf does.
pub fn tokens(text: &str, runtime: u32) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let lit = literal_len(rest);
        if lit > 0 {
            out.push(Token::Literal(text[i + 1..i + lit].to_string()));
            i += lit;
            continue;
        }
        let num = number_len(rest);
        let sym = symbol_len(rest);
        if sym > 0 && sym >= num {
            let word = &text[i..i + sym];
            if let Some((_, kw)) = KEYWORDS.iter().find(|(k, _)| *k == word) {
                out.push(Token::Kw(*kw));
            } else if sym > num {
                out.push(Token::Id(unescape(word, runtime)));
            } else {
                out.push(Token::Num(word.parse().unwrap_or(f64::NAN)));
            }
            i += sym;
            continue;
        }
        if num > 0 {
            out.push(Token::Num(text[i..i + num].parse().unwrap_or(f64::NAN)));
            i += num;
            continue;
        }
        let c = b[i] as char;
        if "|^&<>-+*/%(),".contains(c) {
            out.push(Token::Op(c));
        }
        i += 1;
    }
    out
}

fn unescape(word: &str, runtime: u32) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '?' => out.push_str(&runtime.to_string()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match_with_keywords_first() {
        assert_eq!(
            tokens("d_ratio(a, 1e9)", 0),
            vec![
                Token::Kw(Keyword::DRatio),
                Token::Op('('),
                Token::Id("a".into()),
                Token::Op(','),
                Token::Num(1e9),
                Token::Op(')')
            ]
        );
        // A longer identifier beats a keyword or a number.
        assert_eq!(tokens("maxima", 0), vec![Token::Id("maxima".into())]);
        assert_eq!(tokens("0x1a", 0), vec![Token::Id("0x1a".into())]);
        assert_eq!(tokens(".5", 0), vec![Token::Num(0.5)]);
        assert_eq!(tokens("1e-3", 0), vec![Token::Num(1e-3)]);
        assert_eq!(tokens("#SMT_on", 0), vec![Token::Literal("SMT_on".into())]);
        assert_eq!(
            tokens(r"cpu_core@UOPS_ISSUED.ANY\,cmask\=1@ - slots", 0),
            vec![
                Token::Id("cpu_core@UOPS_ISSUED.ANY,cmask=1@".into()),
                Token::Op('-'),
                Token::Id("slots".into())
            ]
        );
        assert_eq!(
            tokens(r"topdown\-retiring", 0),
            vec![Token::Id("topdown-retiring".into())]
        );
        assert_eq!(tokens("imc_?", 3), vec![Token::Id("imc_3".into())]);
        assert_eq!(
            tokens(r"a@X@ / msr@tsc\,cpu=cpu_atom@", 0),
            vec![
                Token::Id("a@X@".into()),
                Token::Op('/'),
                Token::Id("msr@tsc,cpu=cpu_atom@".into())
            ]
        );
    }
}
