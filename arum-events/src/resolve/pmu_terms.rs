//! `PMU/terms/` and the metric files' `PMU@terms@`: an event of a core PMU given by its fields
//! (`cpu/event=0x3c,umask=0/`) or by name with terms applied
//! (`cpu_atom/INST_RETIRED.ANY,cmask=1/`), `software/NAME/`, and any other PMU in sysfs by its
//! named events and formats (`msr/tsc/`).

use super::{
    best_match, software, software_event, EncodingSource, Fields, HwEvent, PmuTarget, ResolveError,
    ResolvedEvent, Resolver, PERF_TYPE_RAW,
};
use crate::generic;
use crate::sysfs::parse_num;
use crate::table::{Style, Unit};

impl Resolver<'_> {
    /// `PMU/terms/`: a core PMU with fields or a named event, `software/NAME/`, or any PMU in
    /// sysfs by its named events and formats.
    pub(super) fn pmu_event(
        &self,
        body: &str,
        pmu: &str,
        terms: &str,
    ) -> Result<ResolvedEvent, ResolveError> {
        let (named, parts) = split_terms(terms);
        if pmu == "software" {
            return software_pmu_event(body, named);
        }
        let unit = Unit::from_name(pmu);
        if self.is_core_pmu(unit, pmu) {
            return self.core_pmu_event(body, unit, named, &parts);
        }
        if unit.is_none() && self.names_a_table_event(pmu) {
            return self.core_pmu_event(body, None, Some(pmu.to_string()), &parts);
        }
        self.sysfs_pmu_event(body, pmu, named, &parts)
    }

    /// Whether `pmu` names a core PMU this CPU has: `cpu` on a part that is not hybrid, or a
    /// core type of a hybrid part.
    fn is_core_pmu(&self, unit: Option<Unit>, pmu: &str) -> bool {
        match unit {
            Some(Unit::Core) => {
                !self.table.is_some_and(|t| t.is_hybrid()) || self.units().contains(&Unit::Core)
            }
            Some(u) => self.units().contains(&u) || self.pmus.and_then(|p| p.get(pmu)).is_some(),
            None => false,
        }
    }

    /// Whether `pmu` is no PMU but the table's event or alias: `EVENT/terms/` (the metric files'
    /// `OCR.X@offcore_rsp=..@`).
    fn names_a_table_event(&self, pmu: &str) -> bool {
        self.pmus.is_none_or(|p| p.get(pmu).is_none())
            && self.table.is_some_and(|t| {
                let head = pmu.split([':', '.']).next().unwrap_or(pmu);
                !t.find(pmu).is_empty() || !t.find(head).is_empty() || !t.alias(pmu).is_empty()
            })
    }

    /// An event on the core PMU of `unit` (None or [`Unit::Core`]: of every core type): the
    /// event `named`, or one given by its fields, with the `terms` applied.
    fn core_pmu_event(
        &self,
        body: &str,
        unit: Option<Unit>,
        named: Option<String>,
        terms: &[&str],
    ) -> Result<ResolvedEvent, ResolveError> {
        let wanted: Vec<Unit> = match unit {
            Some(Unit::Core) | None => self.units(),
            Some(u) => vec![u],
        };
        let per_unit = match named {
            Some(n) => wanted
                .iter()
                .map(|u| self.named_unit(&n, *u))
                .collect::<Result<Vec<_>, _>>()?,
            None => {
                let hw = self.raw(0, 0, "event given by its fields");
                wanted
                    .iter()
                    .map(|u| (*u, String::new(), hw.clone()))
                    .collect()
            }
        };
        let mut targets = Vec::new();
        let mut source = EncodingSource::Raw;
        for (i, (u, _, hw)) in per_unit.into_iter().enumerate() {
            let hw = self.apply_terms(body, hw, terms)?;
            // Terms change the encoding: where it came from is then the user.
            if i == 0 && terms.is_empty() {
                source = hw.register_source.clone().unwrap_or(EncodingSource::Raw);
            }
            targets.push(self.raw_target(u, hw));
        }
        Ok(self.hardware(body.to_string(), None, source, targets))
    }

    /// An event of any other PMU in sysfs: its named event and terms through its formats.
    fn sysfs_pmu_event(
        &self,
        body: &str,
        pmu: &str,
        named: Option<String>,
        terms: &[&str],
    ) -> Result<ResolvedEvent, ResolveError> {
        let Some(pmus) = self.pmus else {
            return Err(ResolveError::NoPmu {
                pmu: pmu.into(),
                why: "is known only on the machine itself (its sysfs entry), not for a CPU named with --cpu".into(),
            });
        };
        let Some(p) = pmus.get(pmu) else {
            return Err(ResolveError::NoPmu {
                pmu: pmu.into(),
                why: format!(
                    "is not on this machine ({}/{pmu} is missing)",
                    crate::sysfs::DEVICES
                ),
            });
        };
        let mut all_terms = Vec::new();
        if let Some(n) = &named {
            all_terms.push(p.event(n).ok_or_else(|| ResolveError::NoPmu {
                pmu: pmu.into(),
                why: format!(
                    "has no event '{n}' (see {}/{pmu}/events)",
                    crate::sysfs::DEVICES
                ),
            })?);
        }
        // `cpu=cpu_core` restricts a system PMU's event to one core type (metric files).
        let mut cpus = p.cpus.clone();
        for t in terms {
            match t.split_once('=') {
                Some(("cpu", core)) => {
                    cpus = Unit::from_name(core)
                        .and_then(|u| pmus.get(u.pmu_name()))
                        .and_then(|c| c.cpus.clone())
                        .or(cpus);
                }
                _ => all_terms.push(t.to_string()),
            }
        }
        let encoded = p.encode(&all_terms.join(","));
        let [config, config1, _] = encoded.map_err(|why| ResolveError::Bad {
            spec: body.into(),
            why,
        })?;
        let hw = HwEvent::opened_as(p.perf_type, config, config1, format!("{pmu} PMU event"));
        let target = PmuTarget {
            pmu: pmu.into(),
            perf_type: p.perf_type,
            config,
            config1,
            cpus,
            unit: Unit::Core,
            hw: Some(hw),
            placement: None,
            note: None,
        };
        Ok(self.hardware(
            body.into(),
            None,
            EncodingSource::Sysfs { pmu: pmu.into() },
            vec![target],
        ))
    }

    /// An event by name for one core type: the table's (or its alias), else the core PMU's
    /// sysfs event (`topdown-retiring`), else a generic event.
    pub(super) fn named_unit(
        &self,
        name: &str,
        unit: Unit,
    ) -> Result<(Unit, String, HwEvent), ResolveError> {
        if let Some(t) = self.table {
            let alias = t
                .alias(name)
                .into_iter()
                .find(|a| a.unit() == Unit::Core || a.unit() == unit);
            let target = alias.map_or(name, |a| a.target());
            match self.native_unit(t, target, Some(unit)) {
                Ok((n, hw)) => return Ok((unit, n, hw)),
                Err(ResolveError::Unknown { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(p) = self.pmus.and_then(|p| p.get(unit.pmu_name())) {
            if let Some(terms) = p.event(name) {
                let [config, config1, _] = p.encode(&terms).map_err(|why| ResolveError::Bad {
                    spec: name.into(),
                    why,
                })?;
                let mut hw = self.raw(config, config1, &format!("{} PMU event {name}", p.name));
                hw.register_source = Some(EncodingSource::Sysfs {
                    pmu: p.name.clone(),
                });
                return Ok((unit, name.into(), hw));
            }
        }
        if let Some(g) = generic::lookup(name) {
            if let Some(hw) = self.register_encoding(&g) {
                return Ok((unit, g.name, hw));
            }
        }
        Err(ResolveError::Unknown {
            name: name.into(),
            suggestion: best_match(name, self.candidates()),
        })
    }

    /// Applies perf terms (`event=`, `umask=`, `cmask=`, `inv`, `edge`, `any`, `config=`,
    /// `config1=`, `offcore_rsp=`, `ldlat=`, `frontend=`) to a register-level encoding.
    fn apply_terms(
        &self,
        spec: &str,
        hw: HwEvent,
        terms: &[&str],
    ) -> Result<HwEvent, ResolveError> {
        let bad = |why: String| ResolveError::Bad {
            spec: spec.into(),
            why,
        };
        if terms.is_empty() {
            return Ok(hw);
        }
        let style = self.style();
        if style == Style::Netburst {
            return Err(bad("NetBurst events are named natively or as raw rNNNN codes, not with event=/umask= terms".into()));
        }
        let mut f = hw.fields.unwrap_or(Fields {
            event_select: 0,
            umask: 0,
            cmask: 0,
            inv: false,
            edge: false,
            any: false,
        });
        let (mut config, mut config1) = (None, hw.config1);
        for term in terms {
            let (key, value) = term.split_once('=').unwrap_or((term, "1"));
            let num =
                || parse_num(value).ok_or_else(|| bad(format!("{key}={value} is not a number")));
            // A value over 32 bits stays out of every field's range (checked below) rather
            // than being cut to its low bits.
            let field = || num().map(|v| u32::try_from(v).unwrap_or(u32::MAX));
            match key {
                "event" => f.event_select = field()?,
                "umask" => f.umask = field()?,
                "cmask" => f.cmask = field()?,
                "inv" => f.inv = num()? != 0,
                "edge" => f.edge = num()? != 0,
                "any" => f.any = num()? != 0,
                "config" => config = Some(num()?),
                "config1" | "offcore_rsp" | "ldlat" | "frontend" => config1 = num()?,
                // Sampling and grouping terms change nothing in what is counted.
                "period" | "freq" | "name" | "metric-id" | "percore" | "pebs" => {}
                other => return Err(bad(format!("unknown term '{other}' (known: event, umask, cmask, inv, edge, any, config, config1, offcore_rsp, ldlat, frontend)"))),
            }
        }
        let max_event = if style == Style::Amd { 0xFFF } else { 0xFF };
        let max_umask = if style == Style::Amd { 0xFF } else { 0xFFFF };
        if f.event_select > max_event || f.umask > max_umask || f.cmask > 0xFF {
            return Err(bad(format!(
                "a field is out of range (event ≤ {max_event:#x}, umask ≤ {max_umask:#x}, cmask ≤ 0xff)"
            )));
        }
        let config = config.unwrap_or_else(|| f.config(style));
        Ok(HwEvent {
            config,
            config1,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: Some(Fields::from_config(style, config)),
            desc: if hw.desc.is_empty() {
                "event given by its fields".into()
            } else {
                hw.desc
            },
            ..hw
        })
    }
}

/// A `PMU/terms/` list: the event a first term without `=` names (`cpu/INST_RETIRED.ANY,cmask=1/`),
/// and the other terms but `name=`.
fn split_terms(terms: &str) -> (Option<String>, Vec<&str>) {
    let mut parts: Vec<&str> = terms
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let named = parts
        .first()
        .filter(|t| !t.contains('=') && !is_flag_term(t))
        .map(|t| t.to_string());
    if named.is_some() {
        parts.remove(0);
    }
    parts.retain(|t| !t.starts_with("name="));
    (named, parts)
}

/// `software/NAME/`.
fn software_pmu_event(body: &str, named: Option<String>) -> Result<ResolvedEvent, ResolveError> {
    let bad = |why: String| ResolveError::Bad {
        spec: body.into(),
        why,
    };
    let n = named.ok_or_else(|| bad("software/NAME/ needs an event name".into()))?;
    let (name, config) =
        software(&n).ok_or_else(|| bad(format!("'{n}' is not a software event")))?;
    Ok(software_event(name, config))
}

fn is_flag_term(t: &str) -> bool {
    matches!(t, "inv" | "edge" | "any" | "pebs" | "percore")
}

/// `PMU/terms/` or the metric files' `PMU@terms@` (with `\,` `\=` `\-` unescaped already).
pub(super) fn pmu_terms(body: &str) -> Option<(&str, &str)> {
    for sep in ['/', '@'] {
        if let Some(rest) = body.strip_suffix(sep) {
            if let Some((pmu, terms)) = rest.split_once(sep) {
                if !pmu.is_empty() && !terms.contains(sep) {
                    return Some((pmu, terms));
                }
            }
        }
    }
    None
}
