//! What clap parsed, as the engine's requests: field for field, no decision taken here.

use arum_core::history::changes::ChangesRequest;
use arum_core::history::{HistoryFormat as ListedFormat, HistoryRequest, SaveRequest};
use arum_core::info::InfoFormat as Listing;
use arum_core::list::ListRequest;
use arum_core::request::{
    BackendChoice as Backend, CpuChoice, EventRequest, Format, FunctionRequest, PerTask,
    ProbeEngine, ProgramRequest, RunRequest, Scope, SyscallRequest,
};
use arum_core::series::compare::input::FromHistory;
use arum_core::series::compare::{CompareFormat as ComparisonFormat, CompareRequest};
use arum_core::series::merge::{MergeFormat as MergedFormat, MergeRequest};
use arum_core::series::saved::HtmlRequest;
use arum_core::series::SeriesRequest;

use super::commands::{
    ChangesArgs, CompareArgs, CompareFormat, HistoryArgs, HistoryFilters, HistoryFormat, HtmlArgs,
    InfoFormat, ListArgs, MergeArgs, MergeFormat,
};
use super::run::{
    BackendChoice, CpuArgs, PerTaskArg, ProbeEngineArg, ProgramArgs, ReportFormat, RunArgs,
    ScopeArg, StrictArgs,
};
use super::series::SeriesArgs;

impl RunArgs {
    /// The run's request and the series options given with it.
    pub fn requests(self) -> (RunRequest, SeriesRequest) {
        let RunArgs {
            program:
                ProgramArgs {
                    launch,
                    shell,
                    argv,
                },
            report,
            events,
            counting,
            functions,
            syscalls,
            watch,
            strictness: StrictArgs { strict },
            series,
        } = self;
        let scope = if counting.all_cpus.unwrap_or(false) {
            Scope::System
        } else {
            match counting.scope {
                ScopeArg::App => Scope::App,
                ScopeArg::System => Scope::System,
            }
        };
        let run = RunRequest {
            program: ProgramRequest {
                launch,
                shell: shell.unwrap_or(false),
                argv,
                compare: series.compare,
                env: series.env.clone(),
            },
            output: report.output,
            format: match report.format {
                ReportFormat::Text => Format::Text,
                ReportFormat::Json => Format::Json,
                ReportFormat::Csv => Format::Csv,
            },
            html: report.html,
            self_timing: report.self_timing.unwrap_or(false),
            events: EventRequest {
                events: events.events,
                metrics: events.metrics,
                events_file: events.events_file,
                cpu: events.cpu.into(),
                scope,
                cpus: counting.cpus,
                per_cpu: counting.per_cpu.unwrap_or(false),
                totals: counting.totals.unwrap_or(false),
                no_multiplex: counting.no_multiplex.unwrap_or(false),
                interval_ms: counting.interval,
                backend: match counting.backend {
                    BackendChoice::Auto => Backend::Auto,
                    BackendChoice::Perf => Backend::Perf,
                    BackendChoice::Kmod => Backend::Kmod,
                },
            },
            ambient: watch.ambient,
            functions: FunctionRequest {
                functions: functions.functions,
                functions_file: functions.functions_file,
                exact_counts: functions.exact_counts.unwrap_or(false),
                probe_budget: functions.probe_budget,
                no_throttle: functions.no_throttle.unwrap_or(false),
            },
            syscalls: SyscallRequest {
                syscalls: syscalls.syscalls,
                task_begin: syscalls.task_begin,
                task_end: syscalls.task_end,
                views: syscalls.views.unwrap_or(false),
            },
            noise_probe: watch.noise_probe.map(|c| c.0),
            per_task: watch.per_task.map(|p| match p {
                PerTaskArg::Top => PerTask::Top,
                PerTaskArg::All => PerTask::All,
            }),
            enable_delayacct: watch.enable_delayacct.unwrap_or(false),
            no_memory_sampling: watch.no_memory_sampling.unwrap_or(false),
            client_counts: None,
            strict: strict.unwrap_or(false),
            probe_engine: match syscalls.probe_engine {
                ProbeEngineArg::Auto => ProbeEngine::Auto,
                ProbeEngineArg::Bpf => ProbeEngine::Bpf,
                ProbeEngineArg::Perf => ProbeEngine::Perf,
            },
        };
        (run, series.into())
    }
}

impl From<SeriesArgs> for SeriesRequest {
    fn from(s: SeriesArgs) -> SeriesRequest {
        SeriesRequest {
            runs: s.runs,
            repeat: s.repeat,
            warmup: s.warmup,
            min_runs: s.min_runs,
            max_runs: s.max_runs,
            prepare: s.prepare,
            setup: s.setup,
            cleanup: s.cleanup,
            parameter_list: s.parameter_list,
            parameter_scan: s.parameter_scan,
            parameter_step_size: s.parameter_step_size,
            ignore_failure: s.ignore_failure,
            export_json: s.export_json,
            export_csv: s.export_csv,
            export_markdown: s.export_markdown,
            confidence: s.confidence,
            save: SaveRequest {
                store: s.save,
                labels: s.labels,
                commit: s.commit,
            },
        }
    }
}

impl From<CpuArgs> for CpuChoice {
    fn from(c: CpuArgs) -> CpuChoice {
        CpuChoice {
            cpu: c.cpu,
            event_tables: c.event_tables,
        }
    }
}

impl From<InfoFormat> for Listing {
    fn from(f: InfoFormat) -> Listing {
        match f {
            InfoFormat::Text => Listing::Text,
            InfoFormat::Json => Listing::Json,
        }
    }
}

impl From<ListArgs> for ListRequest {
    fn from(a: ListArgs) -> ListRequest {
        ListRequest {
            cpus: a.cpus,
            cpu: a.cpu.into(),
            format: a.format.into(),
            metrics: a.metrics,
            pattern: a.pattern,
        }
    }
}

impl From<CompareArgs> for CompareRequest {
    fn from(a: CompareArgs) -> CompareRequest {
        CompareRequest {
            base: a.base,
            new: a.new,
            metrics: a.metrics,
            all: a.all,
            fail_if_worse: a.fail_if_worse,
            confidence: a.confidence,
            base_name: a.base_name,
            new_name: a.new_name,
            format: match a.format {
                CompareFormat::Text => ComparisonFormat::Text,
                CompareFormat::Json => ComparisonFormat::Json,
            },
            output: a.output,
            history: FromHistory {
                store: a.store,
                last: a.last,
            },
        }
    }
}

impl From<MergeArgs> for MergeRequest {
    fn from(a: MergeArgs) -> MergeRequest {
        MergeRequest {
            files: a.files,
            format: match a.format {
                MergeFormat::Text => MergedFormat::Text,
                MergeFormat::Json => MergedFormat::Json,
            },
            output: a.output,
            all: a.all,
        }
    }
}

impl From<HtmlArgs> for HtmlRequest {
    fn from(a: HtmlArgs) -> HtmlRequest {
        HtmlRequest {
            input: a.input,
            output: a.output,
        }
    }
}

impl From<HistoryFilters> for HistoryRequest {
    fn from(f: HistoryFilters) -> HistoryRequest {
        HistoryRequest {
            store: f.store,
            labels: f.labels,
            command: f.command,
            host: f.host,
            since: f.since,
            until: f.until,
            last: f.last,
            metrics: Vec::new(),
            format: match f.format {
                HistoryFormat::Text => ListedFormat::Text,
                HistoryFormat::Csv => ListedFormat::Csv,
                HistoryFormat::Json => ListedFormat::Json,
            },
            html: None,
            output: f.output,
        }
    }
}

impl From<HistoryArgs> for HistoryRequest {
    fn from(a: HistoryArgs) -> HistoryRequest {
        HistoryRequest {
            html: a.html,
            metrics: a.metrics,
            ..a.filters.into()
        }
    }
}

impl ChangesArgs {
    pub fn request(self) -> ChangesRequest {
        let mut query: HistoryRequest = self.filters.into();
        query.metrics = vec![self.metric];
        ChangesRequest {
            query,
            significance: self.significance,
            min_change: self.min_change,
            fail_if_worse: self.fail_if_worse,
        }
    }
}
