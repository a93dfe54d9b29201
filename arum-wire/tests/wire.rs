//! The /dev/arum request validation shared with the module.

use arum_wire::*;

const LIMITS: Limits = Limits {
    style: STYLE_INTEL,
    general_counters: 4,
    fixed_counters: 3,
    msr_allowed: true,
};

fn request() -> Request {
    let mut r = Request::new(FLAG_USER | FLAG_KERNEL);
    r.cpus[0] = 0b11;
    r.ncounters = 2;
    r.counters[0] = CounterRequest {
        source: SOURCE_MSR,
        index: 0,
        config: 0x01c2,
        ..Default::default()
    };
    r.counters[1] = CounterRequest {
        source: SOURCE_PERF,
        perf_type: 1,
        config: 1,
        ..Default::default()
    };
    r
}

fn check(r: &Request) -> Result<(), Refusal> {
    validate(r, std::mem::size_of::<Request>(), &LIMITS)
}

#[test]
fn a_good_request_passes() {
    assert_eq!(check(&request()), Ok(()));
}

#[test]
fn every_check_refuses_with_its_code() {
    let code = |f: &dyn Fn(&mut Request)| {
        let mut r = request();
        f(&mut r);
        check(&r).unwrap_err().code
    };
    assert_eq!(
        validate(&request(), 10, &LIMITS).unwrap_err().code,
        ERR_SIZE
    );
    assert_eq!(code(&|r| r.magic = 0), ERR_MAGIC);
    assert_eq!(code(&|r| r.version = 9), ERR_VERSION);
    assert_eq!(code(&|r| r.ncounters = 19), ERR_TOO_MANY_COUNTERS);
    assert_eq!(code(&|r| r.flags = 0), ERR_FLAGS);
    assert_eq!(code(&|r| r.cpus = [0; CPUMASK_WORDS]), ERR_NO_CPUS);
    assert_eq!(code(&|r| r.counters[0].index = 4), ERR_COUNTER_INDEX);
    assert_eq!(
        code(&|r| r.counters[0].config |= 1 << 20),
        ERR_INTERRUPT_BIT
    );
    assert_eq!(
        code(&|r| r.counters[0].config |= 1 << 22),
        ERR_RESERVED_BITS
    );
    assert_eq!(code(&|r| r.counters[5].config = 1), ERR_RESERVED_BITS);
    assert_eq!(
        code(&|r| r.counters[1] = r.counters[0]),
        ERR_DUPLICATE_COUNTER
    );
    assert_eq!(code(&|r| r.counters[0].source = 7), ERR_SOURCE);
    let refusal = check(&{
        let mut r = request();
        r.counters[1] = CounterRequest {
            source: SOURCE_MSR,
            index: 33,
            config: 1 << 20,
            ..Default::default()
        };
        r
    })
    .unwrap_err();
    assert_eq!((refusal.code, refusal.counter), (ERR_INTERRUPT_BIT, 1));
}

#[test]
fn netburst_requests_need_an_escr_and_no_overflow_interrupt() {
    let limits = Limits {
        style: STYLE_NETBURST,
        general_counters: 18,
        fixed_counters: 0,
        msr_allowed: true,
    };
    let mut r = Request::new(FLAG_USER);
    r.cpus[0] = 1;
    r.ncounters = 1;
    r.counters[0] = CounterRequest {
        source: SOURCE_MSR,
        index: 12,
        escr_msr: 0x3B8,
        escr: 0x0400_0200,
        config: 0x3_9000,
        ..Default::default()
    };
    let len = std::mem::size_of::<Request>();
    assert_eq!(validate(&r, len, &limits), Ok(()));
    r.counters[0].escr_msr = 0x186;
    assert_eq!(validate(&r, len, &limits).unwrap_err().code, ERR_ESCR_MSR);
    r.counters[0].escr_msr = 0x3B8;
    r.counters[0].config |= 1 << 26;
    assert_eq!(
        validate(&r, len, &limits).unwrap_err().code,
        ERR_INTERRUPT_BIT
    );
}

#[test]
fn msr_source_is_refused_unless_enabled() {
    let limits = Limits {
        msr_allowed: false,
        ..LIMITS
    };
    assert_eq!(
        validate(&request(), std::mem::size_of::<Request>(), &limits)
            .unwrap_err()
            .code,
        ERR_SOURCE
    );
}

#[test]
fn encoding_round_trips_and_matches_the_struct_size() {
    let mut r = request();
    r.timer_period_ns = 123_456_789;
    r.cpus[3] = 1 << 63;
    let mut buf = vec![0u8; REQUEST_SIZE];
    r.encode(&mut buf);
    assert_eq!(Request::decode(&buf), Some(r));
    assert_eq!(Request::decode(&buf[1..]), None);
    let h = ResponseHeader {
        magic: MAGIC,
        version: VERSION,
        status: -22,
        error_code: ERR_CPU_OFFLINE,
        error_cpu: 3,
        accumulations: 9,
        start_spread_ns: 7,
        stop_spread_ns: 8,
        sample_stride: 2,
        flags: RESPONSE_SERIES_THINNED,
        ..Default::default()
    };
    let mut buf = vec![0u8; HEADER_SIZE];
    h.encode(&mut buf);
    assert_eq!(ResponseHeader::decode(&buf), Some(h));
    let mut c = CpuCounts {
        cpu: 1,
        flags: CPU_WENT_OFFLINE,
        start_offset_ns: 3,
        counts: [7; MAX_COUNTERS],
        ..Default::default()
    };
    c.time_enabled_ns[2] = 5;
    c.time_running_ns[2] = 4;
    let mut buf = vec![0u8; CPU_COUNTS_SIZE];
    c.encode(&mut buf);
    assert_eq!(CpuCounts::decode(&buf), Some(c));
    let s = Sample {
        cpu: 2,
        expiry: 6,
        time_ns: 99,
        counts: [3; MAX_COUNTERS],
    };
    let mut buf = vec![0u8; SAMPLE_SIZE];
    s.encode(&mut buf);
    assert_eq!(Sample::decode(&buf), Some(s));
}

/// A response of `ncpus` records and `nsamples` samples, as the module lays it out.
fn response(ncpus: u32, nsamples: u32) -> Vec<u8> {
    let size = HEADER_SIZE + ncpus as usize * CPU_COUNTS_SIZE + nsamples as usize * SAMPLE_SIZE;
    let mut buf = vec![0u8; size];
    ResponseHeader {
        magic: MAGIC,
        version: VERSION,
        size: size as u32,
        ncpus,
        ncounters: 1,
        nsamples,
        ..Default::default()
    }
    .encode(&mut buf);
    for k in 0..ncpus as usize {
        let at = HEADER_SIZE + k * CPU_COUNTS_SIZE;
        CpuCounts {
            cpu: 10 + k as u32,
            ..Default::default()
        }
        .encode(&mut buf[at..]);
    }
    for j in 0..nsamples as usize {
        let at = HEADER_SIZE + ncpus as usize * CPU_COUNTS_SIZE + j * SAMPLE_SIZE;
        Sample {
            cpu: 10,
            expiry: j as u32,
            ..Default::default()
        }
        .encode(&mut buf[at..]);
    }
    buf
}

#[test]
fn a_response_parses_into_its_records_and_bad_ones_are_refused() {
    let buf = response(3, 4);
    let r = Response::parse(&buf).unwrap();
    assert_eq!(r.cpus().map(|c| c.cpu).collect::<Vec<_>>(), [10, 11, 12]);
    assert_eq!(
        r.samples().map(|s| s.expiry).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(
        Response::parse(&buf[..buf.len() - 1]).unwrap_err(),
        ParseError::Truncated
    );
    assert_eq!(
        Response::parse(&buf[..10]).unwrap_err(),
        ParseError::Truncated
    );
    let mut bad = buf.clone();
    bad[0] ^= 1;
    assert_eq!(Response::parse(&bad).unwrap_err(), ParseError::BadMagic);
    let mut old = buf.clone();
    old[4] = 1;
    assert_eq!(Response::parse(&old).unwrap_err(), ParseError::Version(1));
    let mut lying = buf.clone();
    lying[36] = 9; // nsamples
    assert_eq!(
        Response::parse(&lying).unwrap_err(),
        ParseError::Inconsistent
    );
}

#[test]
fn scaling_uses_each_counters_own_times() {
    let mut c = CpuCounts::default();
    c.counts[0] = 100;
    c.time_enabled_ns[0] = 1000;
    c.time_running_ns[0] = 250;
    c.counts[1] = 100;
    c.time_enabled_ns[1] = 1000;
    c.time_running_ns[1] = 1000;
    assert_eq!(c.scaled(0), Some(400));
    assert_eq!(c.scaled(1), Some(100));
    assert_eq!(c.scaled(2), None);
    assert_eq!(c.scaled(MAX_COUNTERS), None);
}

fn perf(perf_type: u32, config: u64) -> Request {
    let mut r = Request::new(FLAG_USER);
    r.cpus[0] = 1;
    r.ncounters = 1;
    r.counters[0] = CounterRequest {
        source: SOURCE_PERF,
        perf_type,
        config,
        ..Default::default()
    };
    r
}

#[test]
fn perf_events_outside_the_allow_list_are_refused() {
    let len = REQUEST_SIZE;
    let ok = |t, c| {
        validate(&perf(t, c), len, &LIMITS)
            .map(|_| ())
            .map_err(|e| e.code)
    };
    assert_eq!(ok(PERF_TYPE_HARDWARE, 0), Ok(()));
    assert_eq!(ok(PERF_TYPE_HARDWARE, 9), Ok(()));
    assert_eq!(ok(PERF_TYPE_HARDWARE, 10), Err(ERR_EVENT_NOT_ALLOWED));
    // The upper half of a hardware config selects another PMU.
    assert_eq!(ok(PERF_TYPE_HARDWARE, 8 << 32), Err(ERR_EVENT_NOT_ALLOWED));
    assert_eq!(ok(PERF_TYPE_HW_CACHE, 6 | 2 << 8 | 1 << 16), Ok(()));
    assert_eq!(ok(PERF_TYPE_HW_CACHE, 7), Err(ERR_EVENT_NOT_ALLOWED));
    assert_eq!(ok(PERF_TYPE_HW_CACHE, 3 << 8), Err(ERR_EVENT_NOT_ALLOWED));
    assert_eq!(ok(PERF_TYPE_HW_CACHE, 2 << 16), Err(ERR_EVENT_NOT_ALLOWED));
    assert_eq!(ok(PERF_TYPE_SOFTWARE, 0), Ok(()));
    assert_eq!(ok(PERF_TYPE_SOFTWARE, 11), Ok(()));
    assert_eq!(ok(PERF_TYPE_SOFTWARE, 9), Err(ERR_EVENT_NOT_ALLOWED)); // dummy
    assert_eq!(ok(PERF_TYPE_SOFTWARE, 10), Err(ERR_EVENT_NOT_ALLOWED)); // bpf-output
    assert_eq!(ok(PERF_TYPE_RAW, 0xffff_ffff_ffff), Ok(()));
    assert_eq!(ok(2, 0), Err(ERR_EVENT_NOT_ALLOWED)); // tracepoint
    assert_eq!(ok(5, 0), Err(ERR_EVENT_NOT_ALLOWED)); // breakpoint
    assert_eq!(ok(13, 1), Err(ERR_EVENT_NOT_ALLOWED)); // a dynamic PMU (RAPL, uncore)
    let mut r = perf(PERF_TYPE_SOFTWARE, 0);
    r.counters[0].config1 = 1;
    assert_eq!(
        validate(&r, len, &LIMITS).unwrap_err().code,
        ERR_RESERVED_BITS
    );
    r.counters[0].perf_type = PERF_TYPE_RAW;
    assert_eq!(validate(&r, len, &LIMITS), Ok(()));
}

#[test]
fn any_thread_is_cleared_and_reported() {
    let mut r = perf(PERF_TYPE_RAW, 0x00c0 | ANY_THREAD);
    assert!(r.clear_any_thread(0));
    assert_eq!(r.counters[0].config, 0x00c0);
    assert!(!r.clear_any_thread(0));
    let mut r = request();
    r.counters[0].config |= ANY_THREAD;
    assert_eq!(check(&r), Ok(()));
    assert!(r.clear_any_thread(STYLE_INTEL));
    assert_eq!(r.counters[0].config & ANY_THREAD, 0);
    // AMD has no AnyThread: bit 21 is reserved there and refused.
    let amd = Limits {
        style: STYLE_AMD,
        ..LIMITS
    };
    let mut r = request();
    r.counters[0].config |= ANY_THREAD;
    assert_eq!(
        validate(&r, REQUEST_SIZE, &amd).unwrap_err().code,
        ERR_RESERVED_BITS
    );
}

#[test]
fn timer_periods_below_the_floor_are_refused() {
    let mut r = request();
    r.timer_period_ns = MIN_PERIOD_NS - 1;
    assert_eq!(check(&r).unwrap_err().code, ERR_PERIOD);
    r.timer_period_ns = MIN_PERIOD_NS;
    assert_eq!(check(&r), Ok(()));
    r.timer_period_ns = 0;
    assert_eq!(check(&r), Ok(()));
}

#[test]
fn the_netburst_escr_table_is_exact_and_pairings_are_checked() {
    // 45 ESCRs; the gaps of 0x3A0-0x3E1 are not ESCRs.
    assert_eq!(NETBURST_ESCRS.len(), 45);
    for gap in [0x3BF, 0x3C6, 0x3C7, 0x3CE, 0x3D0, 0x3DF] {
        assert!(netburst_escr(gap).is_none(), "{gap:#x}");
    }
    let limits = Limits {
        style: STYLE_NETBURST,
        general_counters: 18,
        fixed_counters: 0,
        msr_allowed: true,
    };
    let mut r = Request::new(FLAG_USER);
    r.cpus[0] = 1;
    r.ncounters = 1;
    // instr_retired on CRU_ESCR0 (select 4) and counter 12.
    r.counters[0] = CounterRequest {
        source: SOURCE_MSR,
        index: 12,
        escr_msr: 0x3B8,
        escr: 0x0400_0200,
        config: 0x3_9000,
        ..Default::default()
    };
    let code = |r: &Request| validate(r, REQUEST_SIZE, &limits).map_err(|e| e.code);
    assert_eq!(code(&r), Ok(()));
    r.counters[0].escr_msr = 0x3BF;
    assert_eq!(code(&r), Err(ERR_ESCR_MSR));
    // CRU_ESCR0 feeds counters 12, 13 and 16 only.
    r.counters[0].escr_msr = 0x3B8;
    r.counters[0].index = 14;
    assert_eq!(code(&r), Err(ERR_ESCR_PAIRING));
    r.counters[0].index = 16;
    assert_eq!(code(&r), Ok(()));
    // The CCCR must select CRU_ESCR0 (4), not CRU_ESCR2 (5).
    r.counters[0].config = 0x3_B000;
    assert_eq!(code(&r), Err(ERR_ESCR_PAIRING));
}

#[test]
fn intel_counter_counts_are_capped_at_the_architectural_maxima() {
    // A hypervisor reporting 32 general (version 4, 48 bits) and 7 fixed counters (48 bits).
    let p = IntelPerfmon::from_cpuid(4 | 32 << 8 | 48 << 16, 7 | 48 << 5).unwrap();
    assert_eq!(
        (p.general, p.fixed, p.width),
        (INTEL_MAX_GENERAL, INTEL_MAX_FIXED, 48)
    );
    // Version 1 has no fixed counters, whatever EDX says.
    let p = IntelPerfmon::from_cpuid(1 | 2 << 8 | 40 << 16, 3 | 40 << 5).unwrap();
    assert_eq!((p.general, p.fixed), (2, 0));
    // Core 2: fixed counters 40 bits wide like the general ones.
    let p = IntelPerfmon::from_cpuid(2 | 2 << 8 | 40 << 16, 3 | 40 << 5).unwrap();
    assert_eq!((p.version, p.general, p.fixed, p.width), (2, 2, 3, 40));
    assert_eq!(IntelPerfmon::from_cpuid(0, 0), None);
    // Version 2 with no general counter.
    assert_eq!(IntelPerfmon::from_cpuid(2 | 40 << 16, 0), None);
}
