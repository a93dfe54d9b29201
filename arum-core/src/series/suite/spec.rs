//! The suite file: a server, a client, parameters, and the network conditions, as TOML.
//!
//! ```toml
//! runs = 5                      # measured runs of every combination (default 5)
//! warmup = 1                    # unrecorded runs before them (default 0)
//! setup = "head -c 1M /dev/zero > {dir}/1M"   # once, before the server starts
//! arum = ["--ambient"]          # more options for every measured run
//!
//! [server]
//! command = "python3 -m http.server 8080 --bind 127.0.0.1 --directory {dir}"
//! port = 8080                   # ready when 127.0.0.1:PORT accepts
//! ready_timeout = "10s"
//!
//! [client]
//! command = "curl -sf -o /dev/null http://127.0.0.1:8080/{size}"
//! clients = "{clients}"         # copies run at once (default 1); may name a parameter
//! duration = "2s"               # each copy repeats the command this long (default: once)
//!
//! [network]
//! netem = "delay {delay}"       # `tc netem` on the suite's loopback, set before every run
//!
//! [parameters]
//! size = ["1K", "1M"]
//! clients = ["1", "4"]
//! delay = ["0ms", "20ms"]
//! ```
//!
//! `{dir}` is a private directory the suite creates and removes; `{NAME}` a parameter.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::error::ArumError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(default = "five")]
    pub runs: u64,
    #[serde(default)]
    pub warmup: u64,
    pub setup: Option<String>,
    #[serde(default)]
    pub arum: Vec<String>,
    pub server: Option<Server>,
    pub client: Client,
    #[serde(default)]
    pub network: Network,
    /// Each parameter's values, in the order written.
    #[serde(default)]
    pub parameters: BTreeMap<String, Values>,
}

fn five() -> u64 {
    5
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    pub command: String,
    pub port: Option<u16>,
    #[serde(default = "ten_seconds", deserialize_with = "duration")]
    pub ready_timeout: Duration,
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    pub command: String,
    /// Copies run at once: a number or `{PARAM}`.
    pub clients: Option<String>,
    /// Each copy repeats the command for this long (`2s`, `500ms`).
    #[serde(default, deserialize_with = "some_duration")]
    pub duration: Option<Duration>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Arguments of `tc qdisc ... netem` for the loopback, `{PARAM}` substituted.
    pub netem: Option<String>,
}

/// Values of a parameter: strings or numbers, as the user wrote them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Values {
    Strings(Vec<String>),
    Numbers(Vec<toml::Value>),
}

impl Values {
    pub fn words(&self) -> Vec<String> {
        match self {
            Values::Strings(v) => v.clone(),
            Values::Numbers(v) => v
                .iter()
                .map(|x| match x {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
        }
    }
}

/// A duration with its unit, as every option of arum takes one (`2s`, `500ms`).
fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    arum_units::duration::parse(&text).map_err(serde::de::Error::custom)
}

fn some_duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    duration(d).map(Some)
}

impl Suite {
    pub fn parse(text: &str, name: &str) -> Result<Suite, ArumError> {
        let suite: Suite = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1);
            ArumError::Usage(match line {
                Some(l) => format!("{name}:{l}: {}", e.message()),
                None => format!("{name}: {}", e.message()),
            })
        })?;
        if suite.runs == 0 {
            return Err(ArumError::Usage(format!(
                "{name}: runs = 0 measures nothing; write runs = 1 or more"
            )));
        }
        for (p, v) in &suite.parameters {
            if v.words().is_empty() || v.words().iter().any(|w| w.contains(',')) {
                return Err(ArumError::Usage(format!(
                    "{name}: parameter {p} needs one value or more, none with a comma"
                )));
            }
        }
        Ok(suite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("spec.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .skip_while(|l| !l.starts_with("```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("```"))
            .collect::<Vec<_>>()
            .join("\n");
        let s = Suite::parse(&doc, "example").expect("parses");
        assert_eq!(s.runs, 5);
        assert_eq!(s.server.unwrap().port, Some(8080));
        assert_eq!(s.parameters["size"].words(), ["1K", "1M"]);
        assert_eq!(s.network.netem.as_deref(), Some("delay {delay}"));
    }

    #[test]
    fn numbers_are_values_too_and_mistakes_are_named() {
        let s = Suite::parse(
            "[client]\ncommand = \"x {n}\"\n[parameters]\nn = [1, 4]\n",
            "t",
        )
        .unwrap();
        assert_eq!(s.parameters["n"].words(), ["1", "4"]);
        let e = Suite::parse("[client]\ncommand = \"x\"\nrnus = 3\n", "t").unwrap_err();
        assert!(e.to_string().contains("rnus"), "{e}");
        assert!(e.to_string().starts_with("t:3: "), "{e}");
        assert!(!e.to_string().contains('\n'), "one line: {e}");
        assert!(Suite::parse("runs = 0\n[client]\ncommand = \"x\"\n", "t").is_err());
    }

    #[test]
    fn durations_take_a_unit_and_a_bad_one_names_its_line() {
        let s = Suite::parse("[client]\ncommand = \"x\"\nduration = \"1.5s\"\n", "t").unwrap();
        assert_eq!(s.client.duration, Some(Duration::from_millis(1500)));
        for bad in ["2", "2 parsecs", "-1s"] {
            let toml = format!("[client]\ncommand = \"x\"\nduration = \"{bad}\"\n");
            let e = Suite::parse(&toml, "t").unwrap_err().to_string();
            assert!(e.starts_with("t:3: ") && !e.contains('\n'), "{bad}: {e}");
        }
        let e = Suite::parse(
            "[server]\ncommand = \"s\"\nready_timeout = \"10\"\n[client]\ncommand = \"x\"\n",
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unit"), "{e}");
    }
}
