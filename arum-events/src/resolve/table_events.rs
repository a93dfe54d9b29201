//! A table's events by name: `EVENT`, `EVENT:MASK[:MASK...]` or `EVENT.MASK`, on each core type
//! that has it, encoded with the unit masks named (or the event's defaults): AMD's and Intel's
//! select fields, or NetBurst's ESCR and CCCR with execution and replay tagging.

use super::{
    EncodingSource, Fields, HwEvent, NetburstEncoding, ResolveError, Resolver, PERF_TYPE_RAW,
};
use crate::table::{EventRef, MaskRef, NetburstRef, ReplayRef, Style, Table, Unit};

/// The CCCR bits every NetBurst event uses: enable (12) and active thread "any" (17:16).
const P4_CCCR_BASE: u32 = 1 << 12 | 3 << 16;

/// ESCR tag enable (bit 4) and the tag value's lowest bit (5).
const P4_ESCR_TAG_ENABLE: u32 = 1 << 4;
const P4_ESCR_TAG_SHIFT: u32 = 5;

impl Resolver<'_> {
    /// `EVENT`, `EVENT:MASK[:MASK...]`, or `EVENT.MASK`, for every core type that has it.
    pub(super) fn native(
        &self,
        table: Table,
        body: &str,
    ) -> Result<Vec<(Unit, String, HwEvent)>, ResolveError> {
        let mut out = Vec::new();
        let mut first_err = None;
        for unit in self.units() {
            match self.native_unit(table, body, Some(unit)) {
                Ok((n, hw)) => out.push((unit, n, hw)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if out.is_empty() {
            return Err(first_err.unwrap_or(ResolveError::Unknown {
                name: body.into(),
                suggestion: None,
            }));
        }
        Ok(out)
    }

    pub(super) fn native_unit(
        &self,
        table: Table,
        body: &str,
        unit: Option<Unit>,
    ) -> Result<(String, HwEvent), ResolveError> {
        let pick = |name: &str| {
            table
                .find(name)
                .into_iter()
                .find(|e| unit.is_none_or(|u| e.unit() == u || e.unit() == Unit::Core))
        };
        let mut parts: Vec<&str> = body.split(':').collect();
        let mut event = pick(parts[0]);
        if event.is_none() {
            if let Some((e, m)) = parts[0].split_once('.') {
                if let Some(found) = pick(e) {
                    event = Some(found);
                    parts.splice(0..1, [e, m]);
                }
            }
        }
        let Some(event) = event else {
            return Err(ResolveError::Unknown {
                name: body.into(),
                suggestion: None,
            });
        };
        self.encode(table, event, &parts[1..])
    }

    /// Encodes a table event with the named unit masks (or its defaults).
    fn encode(
        &self,
        table: Table,
        event: EventRef,
        asked: &[&str],
    ) -> Result<(String, HwEvent), ResolveError> {
        let model = self.cpu.model;
        if !event.on_model(model) {
            return Err(ResolveError::NotOnModel {
                name: event.name().into(),
                family: self.cpu.family,
                model,
            });
        }
        let available: Vec<MaskRef> = event.masks().filter(|m| m.on_model(model)).collect();
        let chosen = chosen_masks(event, &available, asked)?;
        let name = qualified_name(table, event, &chosen, asked);
        let source = table_source(table, event, &chosen);
        let hw = match event.netburst() {
            Some(nb) => self.encode_netburst(event, nb, &chosen, asked)?,
            None => encode_select(table.style(), event, &available, &chosen, &name)?,
        };
        Ok((
            name,
            HwEvent {
                register_source: Some(source),
                ..hw
            },
        ))
    }

    fn encode_netburst(
        &self,
        event: EventRef,
        nb: NetburstRef,
        chosen: &[MaskRef],
        asked: &[&str],
    ) -> Result<HwEvent, ResolveError> {
        let emask = chosen
            .iter()
            .filter_map(|m| m.bit())
            .fold(0u32, |acc, b| acc | 1 << b);
        let tags = chosen
            .iter()
            .filter_map(|m| m.tag())
            .fold(0u32, |acc, t| acc | 1 << t);
        let mut escr = nb.escr_select() << 25 | emask << 9;
        if tags != 0 {
            escr |= P4_ESCR_TAG_ENABLE | tags << P4_ESCR_TAG_SHIFT;
        }
        let replays = asked_replays(event, asked);
        let pebs_enable = replays.iter().fold(0, |a, r| a | r.pebs_enable());
        let pebs_matrix_vert = replays.iter().fold(0, |a, r| a | r.matrix_vert());
        let (perf_metric, perf_unsupported) = match replays.as_slice() {
            [] => (None, None),
            [one] => match one.perf_metric() {
                Some(m) => (Some(m), None),
                None => (None, Some(format!("Linux's P4 PMU has no replay metric for {}", one.name()))),
            },
            many => (
                None,
                Some(format!(
                    "Linux's P4 PMU takes one replay-tagging metric per event, not {} ({}); the module's register back-end programs the combination",
                    many.len(),
                    many.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
                )),
            ),
        };
        let enc = NetburstEncoding {
            escr,
            cccr: P4_CCCR_BASE | nb.cccr_select() << 13,
            p4_index: nb.p4_index(),
            escrs: nb.escrs(),
            escr_msrs: nb.escr_msrs(),
            escr_counters: nb.escr_counters(),
            pebs_enable,
            pebs_matrix_vert,
            perf_metric,
            perf_unsupported,
        };
        Ok(HwEvent {
            config: enc.perf_config(),
            config1: 0,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: None,
            counters: None,
            pair: false,
            netburst: Some(enc),
            msr: 0,
            desc: event.desc().into(),
            register_source: None,
        })
    }
}

/// The unit masks `asked` names, or the event's defaults when it names none. On NetBurst, a
/// replay-tagging kind (`replay_event:L1_LD_MISS`) is not a mask and is passed over here.
fn chosen_masks(
    event: EventRef,
    available: &[MaskRef],
    asked: &[&str],
) -> Result<Vec<MaskRef>, ResolveError> {
    let mut chosen = Vec::new();
    for q in asked {
        match available.iter().find(|m| m.name().eq_ignore_ascii_case(q)) {
            Some(m) => chosen.push(*m),
            None if event.netburst().is_some() && is_replay(event, q) => {}
            None => {
                return Err(ResolveError::UnknownMask {
                    event: event.name().into(),
                    mask: q.to_string(),
                    valid: mask_names(available),
                })
            }
        }
    }
    if chosen.is_empty() && !available.is_empty() && !event.plain() {
        return default_masks(event, available, asked);
    }
    Ok(chosen)
}

/// The masks an event counts when none is named; an event without defaults needs one named.
fn default_masks(
    event: EventRef,
    available: &[MaskRef],
    asked: &[&str],
) -> Result<Vec<MaskRef>, ResolveError> {
    let mut chosen: Vec<MaskRef> = available
        .iter()
        .filter(|m| {
            event
                .defaults()
                .iter()
                .any(|d| d.eq_ignore_ascii_case(m.name()))
        })
        .copied()
        .collect();
    if chosen.is_empty() && asked.iter().any(|q| is_replay(event, q)) {
        // Replay tagging counts non-bogus replays (SDM: replay_event with NBOGUS).
        chosen.extend(available.iter().find(|m| m.name() == "NBOGUS"));
    }
    if chosen.is_empty() {
        return Err(ResolveError::NeedsMask {
            event: event.name().into(),
            valid: mask_names(available),
        });
    }
    Ok(chosen)
}

fn mask_names(masks: &[MaskRef]) -> Vec<String> {
    masks.iter().map(|m| m.name().to_string()).collect()
}

fn is_replay(event: EventRef, asked: &str) -> bool {
    event
        .replays()
        .any(|r| r.name().eq_ignore_ascii_case(asked))
}

/// The replay-tagging kinds `asked` names, in its order.
fn asked_replays(event: EventRef, asked: &[&str]) -> Vec<ReplayRef> {
    asked
        .iter()
        .filter_map(|q| event.replays().find(|r| r.name().eq_ignore_ascii_case(q)))
        .collect()
}

/// The canonical name: the event with its masks and replay kinds as the table spells them
/// (`INST_RETIRED.ANY_P`, `DATA_CACHE_REFILLS:L2_SHARED:SYSTEM`).
fn qualified_name(table: Table, event: EventRef, chosen: &[MaskRef], asked: &[&str]) -> String {
    let mut qualifiers: Vec<&str> = chosen.iter().map(|m| m.name()).collect();
    qualifiers.extend(asked_replays(event, asked).iter().map(|r| r.name()));
    if qualifiers.is_empty() {
        event.name().to_string()
    } else {
        format!(
            "{}{}{}",
            event.name(),
            table.separator(),
            qualifiers.join(":")
        )
    }
}

/// Which of the table's sources gave the encoding: the first chosen mask's, else the event's.
fn table_source(table: Table, event: EventRef, chosen: &[MaskRef]) -> EncodingSource {
    let src = chosen
        .first()
        .map(|m| m.src())
        .filter(|s| !s.is_empty())
        .unwrap_or(event.src());
    let origin = src
        .split([',', '!', '~'])
        .next()
        .and_then(|k| table.sources().into_iter().find(|(key, _)| *key == k))
        .or_else(|| table.sources().into_iter().next())
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    EncodingSource::Table {
        table: table.name().into(),
        src: src.into(),
        origin,
    }
}

/// An AMD or Intel table event's select fields with the unit masks `chosen` (none: the event's
/// own unit mask). A mask's event select, counter mask, invert, edge and MSR value replace the
/// event's; its `any`, pair and counters add to the event's.
fn encode_select(
    style: Style,
    event: EventRef,
    available: &[MaskRef],
    chosen: &[MaskRef],
    name: &str,
) -> Result<HwEvent, ResolveError> {
    let mut f = Fields {
        event_select: event.event(),
        umask: event.umask(),
        cmask: event.cmask(),
        inv: event.inv(),
        edge: event.edge(),
        any: event.any(),
    };
    let mut hw = HwEvent {
        config: 0,
        config1: event.config1(),
        perf_type: PERF_TYPE_RAW,
        raw: true,
        fields: None,
        counters: common_counters(event.counters(), chosen),
        pair: event.pair() || chosen.iter().any(|m| m.pair()),
        netburst: None,
        msr: event.msr(),
        desc: event.desc().to_string(),
        register_source: None,
    };
    if let Some(first) = chosen.first() {
        check_combinable(event, chosen, name)?;
        f.event_select = first.event().unwrap_or(event.event());
        f.umask = combined_umask(available, chosen);
        (f.cmask, f.inv, f.edge) = (first.cmask(), first.inv(), first.edge());
        f.any |= chosen.iter().any(|m| m.any());
        hw.config1 = first.config1();
        if let Some(msr) = chosen.iter().rev().map(|m| m.msr()).find(|&m| m != 0) {
            hw.msr = msr;
        }
        if let [only] = chosen {
            hw.desc = format!("{} — {}", event.desc(), only.desc());
        }
    }
    hw.config = f.config(style);
    hw.fields = Some(f);
    Ok(hw)
}

/// Masks combine only when they agree on everything but their unit-mask value: the first one
/// that does not is refused.
fn check_combinable(event: EventRef, chosen: &[MaskRef], name: &str) -> Result<(), ResolveError> {
    let own = |m: &MaskRef| {
        (
            m.event().unwrap_or(event.event()),
            m.cmask(),
            m.inv(),
            m.edge(),
            m.config1(),
        )
    };
    let Some(first) = chosen.first() else {
        return Ok(());
    };
    match chosen[1..].iter().find(|m| own(m) != own(first)) {
        Some(odd) => Err(ResolveError::Bad {
            spec: name.into(),
            why: format!("unit mask {} has its own event select, counter mask, invert, edge or MSR value and cannot be combined", odd.name()),
        }),
        None => Ok(()),
    }
}

/// The OR of the masks' values; an `all` mask is every other mask this model has.
fn combined_umask(available: &[MaskRef], chosen: &[MaskRef]) -> u32 {
    let all_value = available
        .iter()
        .filter(|m| !m.all())
        .fold(0, |acc, m| acc | m.value().unwrap_or(0));
    chosen.iter().fold(0, |acc, m| {
        acc | if m.all() {
            all_value
        } else {
            m.value().unwrap_or(0)
        }
    })
}

/// The counters the event and every chosen mask allow (None: any general counter).
fn common_counters(event: Option<Vec<u32>>, chosen: &[MaskRef]) -> Option<Vec<u32>> {
    chosen
        .iter()
        .filter_map(|m| m.counters())
        .fold(event, |acc, c| {
            Some(match acc {
                Some(prev) => prev.into_iter().filter(|x| c.contains(x)).collect(),
                None => c,
            })
        })
}
