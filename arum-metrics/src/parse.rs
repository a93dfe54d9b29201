//! The expression tree and its parser (precedence from perf's expr.y, lowest first):
//! `if else` (right-associative), `|`, `^`, `&`, `<` `>`, `+` `-`, `*` `/` `%`, unary `-`.

use crate::lex::{tokens, Keyword, Token};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    Xor,
    And,
    Lt,
    Gt,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    /// An event, a tool event (`duration_time`) or another metric, by name.
    Id(String),
    /// `#name`.
    Literal(String),
    Neg(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`.
    If {
        then: Box<Expr>,
        cond: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    DRatio(Box<Expr>, Box<Expr>),
    SourceCount(String),
    AggrNr(String),
    HasEvent(String),
    StrcmpCpuidStr(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("metric expression {text:?}: {why}")]
pub struct ParseError {
    pub text: String,
    pub why: String,
}

struct Parser {
    toks: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn expect_op(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(Token::Op(o)) if o == c => Ok(()),
            other => Err(format!("expected '{c}', found {}", show(other.as_ref()))),
        }
    }

    fn if_expr(&mut self) -> Result<Expr, String> {
        let then = self.binary(0)?;
        if self.peek() == Some(&Token::Kw(Keyword::If)) {
            self.next();
            let cond = self.binary(0)?;
            match self.next() {
                Some(Token::Kw(Keyword::Else)) => {}
                other => return Err(format!("expected 'else', found {}", show(other.as_ref()))),
            }
            let otherwise = self.if_expr()?;
            return Ok(Expr::If {
                then: Box::new(then),
                cond: Box::new(cond),
                otherwise: Box::new(otherwise),
            });
        }
        Ok(then)
    }

    /// Binary operators by precedence climbing (all left-associative).
    fn binary(&mut self, min_level: u8) -> Result<Expr, String> {
        let mut lhs = self.unary()?;
        while let Some(Token::Op(c)) = self.peek() {
            let Some((op, level)) = op_of(*c) else {
                break;
            };
            if level < min_level {
                break;
            }
            self.next();
            let rhs = self.binary(level + 1)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some(&Token::Op('-')) {
            self.next();
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn id_arg(&mut self) -> Result<String, String> {
        self.expect_op('(')?;
        let id = match self.next() {
            Some(Token::Id(s)) => s,
            other => {
                return Err(format!(
                    "expected an event name, found {}",
                    show(other.as_ref())
                ))
            }
        };
        self.expect_op(')')?;
        Ok(id)
    }

    fn two_args(&mut self) -> Result<(Box<Expr>, Box<Expr>), String> {
        self.expect_op('(')?;
        let a = self.if_expr()?;
        self.expect_op(',')?;
        let b = self.if_expr()?;
        self.expect_op(')')?;
        Ok((Box::new(a), Box::new(b)))
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Token::Num(n)) => Ok(Expr::Num(n)),
            Some(Token::Id(s)) => Ok(Expr::Id(s)),
            Some(Token::Literal(s)) => Ok(Expr::Literal(s)),
            Some(Token::Kw(Keyword::NaN)) => Ok(Expr::Num(f64::NAN)),
            Some(Token::Op('(')) => {
                let e = self.if_expr()?;
                self.expect_op(')')?;
                Ok(e)
            }
            Some(Token::Kw(Keyword::Min)) => self.two_args().map(|(a, b)| Expr::Min(a, b)),
            Some(Token::Kw(Keyword::Max)) => self.two_args().map(|(a, b)| Expr::Max(a, b)),
            Some(Token::Kw(Keyword::DRatio)) => self.two_args().map(|(a, b)| Expr::DRatio(a, b)),
            Some(Token::Kw(Keyword::SourceCount)) => self.id_arg().map(Expr::SourceCount),
            Some(Token::Kw(Keyword::AggrNr)) => self.id_arg().map(Expr::AggrNr),
            Some(Token::Kw(Keyword::HasEvent)) => self.id_arg().map(Expr::HasEvent),
            Some(Token::Kw(Keyword::StrcmpCpuidStr)) => self.id_arg().map(Expr::StrcmpCpuidStr),
            other => Err(format!("unexpected {}", show(other.as_ref()))),
        }
    }
}

fn op_of(c: char) -> Option<(BinOp, u8)> {
    Some(match c {
        '|' => (BinOp::Or, 0),
        '^' => (BinOp::Xor, 1),
        '&' => (BinOp::And, 2),
        '<' => (BinOp::Lt, 3),
        '>' => (BinOp::Gt, 3),
        '+' => (BinOp::Add, 4),
        '-' => (BinOp::Sub, 4),
        '*' => (BinOp::Mul, 5),
        '/' => (BinOp::Div, 5),
        '%' => (BinOp::Mod, 5),
        _ => return None,
    })
}

fn show(t: Option<&Token>) -> String {
    match t {
        None => "the end".into(),
        Some(Token::Num(n)) => format!("number {n}"),
        Some(Token::Id(s)) => format!("'{s}'"),
        Some(Token::Literal(s)) => format!("'#{s}'"),
        Some(Token::Kw(k)) => format!("{k:?}"),
        Some(Token::Op(c)) => format!("'{c}'"),
    }
}

impl Expr {
    /// Parses a metric expression; `?` in identifiers becomes 0 (perf's runtime parameter).
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            toks: tokens(text, 0),
            at: 0,
        };
        let err = |why: String| ParseError {
            text: text.to_string(),
            why,
        };
        let e = p.if_expr().map_err(err)?;
        if p.at < p.toks.len() {
            return Err(err(format!(
                "unexpected {} after the expression",
                show(p.peek())
            )));
        }
        Ok(e)
    }

    /// Every identifier the expression names (events, metrics, tool events), in order, once.
    pub fn ids(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Id(s) | Expr::SourceCount(s) | Expr::AggrNr(s) = e {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        });
        out
    }

    fn walk(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Neg(a) => a.walk(f),
            Expr::Bin(_, a, b) | Expr::Min(a, b) | Expr::Max(a, b) | Expr::DRatio(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                then.walk(f);
                cond.walk(f);
                otherwise.walk(f);
            }
            _ => {}
        }
    }

    /// Replaces identifiers for which `f` gives an expression (other metrics, inlined).
    pub fn substitute(&mut self, f: &mut impl FnMut(&str) -> Option<Expr>) {
        match self {
            Expr::Id(s) => {
                if let Some(e) = f(s) {
                    *self = e;
                }
            }
            Expr::Neg(a) => a.substitute(f),
            Expr::Bin(_, a, b) | Expr::Min(a, b) | Expr::Max(a, b) | Expr::DRatio(a, b) => {
                a.substitute(f);
                b.substitute(f);
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                then.substitute(f);
                cond.substitute(f);
                otherwise.substitute(f);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        Expr::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }
    fn id(s: &str) -> Box<Expr> {
        Box::new(Expr::Id(s.into()))
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(
            p("a + b * c"),
            Expr::Bin(
                BinOp::Add,
                id("a"),
                Box::new(Expr::Bin(BinOp::Mul, id("b"), id("c")))
            )
        );
        assert_eq!(
            p("a - b - c"),
            Expr::Bin(
                BinOp::Sub,
                Box::new(Expr::Bin(BinOp::Sub, id("a"), id("b"))),
                id("c")
            )
        );
        // Comparison binds weaker than arithmetic, logic weaker still.
        assert_eq!(
            p("a > 1 & b"),
            Expr::Bin(
                BinOp::And,
                Box::new(Expr::Bin(BinOp::Gt, id("a"), Box::new(Expr::Num(1.0)))),
                id("b")
            )
        );
        assert_eq!(
            p("-a * b"),
            Expr::Bin(BinOp::Mul, Box::new(Expr::Neg(id("a"))), id("b"))
        );
    }

    #[test]
    fn if_else_is_right_associative_and_lowest() {
        let e = p("a if #SMT_on else b if c else d + 1");
        let Expr::If { otherwise, .. } = e else {
            panic!("{e:?}")
        };
        assert!(matches!(*otherwise, Expr::If { .. }));
        assert!(Expr::parse("a if b").is_err());
    }

    #[test]
    fn functions_and_errors() {
        assert_eq!(
            p("d_ratio(x, max(y, 0))").ids(),
            vec!["x".to_string(), "y".to_string()]
        );
        assert_eq!(p("source_count(UNC_X)"), Expr::SourceCount("UNC_X".into()));
        assert_eq!(p("has_event(cycles)"), Expr::HasEvent("cycles".into()));
        assert!(Expr::parse("min(a)").is_err());
        assert!(Expr::parse("(a + b").is_err());
        assert!(Expr::parse("a b").is_err());
    }
}
