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
    r.timer_period_ns = 123_456;
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
        ..Default::default()
    };
    let mut buf = vec![0u8; HEADER_SIZE];
    h.encode(&mut buf);
    assert_eq!(ResponseHeader::decode(&buf), Some(h));
    let c = CpuCounts {
        cpu: 1,
        status: 0,
        time_enabled_ns: 5,
        time_running_ns: 4,
        counts: [7; MAX_COUNTERS],
    };
    let mut buf = vec![0u8; CPU_COUNTS_SIZE];
    c.encode(&mut buf);
    assert_eq!(CpuCounts::decode(&buf), Some(c));
    let s = Sample {
        cpu: 2,
        reserved: 0,
        time_ns: 99,
        counts: [3; MAX_COUNTERS],
    };
    let mut buf = vec![0u8; SAMPLE_SIZE];
    s.encode(&mut buf);
    assert_eq!(Sample::decode(&buf), Some(s));
}
