//! Network: TCP round trip, connection set-up and tear-down, and bandwidth, on loopback and to
//! a second network namespace over a veth pair (with an optional `tc netem` delay emulating a
//! remote host). Only addresses this command made are ever contacted.

mod netns;
mod tcp;

use std::net::SocketAddr;

use crate::context::{skipped, Context, Entry, Group, Sink};
use crate::model::findings::NetworkFacts;
use crate::model::{Measurement, Unit};
use crate::sys::cpu::Pinned;

pub const GROUP: Group = Group {
    name: "network",
    title: "Network (TCP)",
    entries: &[
        LO_RTT,
        LO6_RTT,
        LO_CONNECT,
        LO_CLOSE,
        LO_BW,
        VETH_RTT,
        VETH_CONNECT,
        VETH_CLOSE,
        VETH_BW,
        NETEM_RTT,
    ],
    run,
};

const RTT: &str = "A 32-byte message written to an echo server of ours (a thread on another CPU \
    where there are two) and read back over one TCP connection (TCP_NODELAY), each round trip \
    timed";
const CONNECT: &str = "connect(2) of a socket created beforehand to a listener of ours (the \
    three-way handshake), one connection per sample";
const CLOSE: &str = "close(2) of a connected socket whose peer is idle, one connection per \
    sample (the FIN is sent; the server, on another CPU where there are two, answers \
    asynchronously)";
const BW: &str = "Bulk data (4 MiB per sample, 16 MiB in the full suite) over one TCP \
    connection until the receiver acknowledges the last byte; bytes per second";
const VETH: &str = "; to a server in a network namespace of its own over a veth pair this \
    command creates (root only) and removes.";

pub const LO_RTT: Entry = Entry::new(
    "network.loopback.rtt",
    "TCP round trip, 127.0.0.1",
    RTT,
    Unit::Ns,
);
pub const LO6_RTT: Entry = Entry::new(
    "network.loopback6.rtt",
    "TCP round trip, ::1",
    RTT,
    Unit::Ns,
);
pub const LO_CONNECT: Entry = Entry::new(
    "network.loopback.connect",
    "TCP connection set-up, 127.0.0.1",
    CONNECT,
    Unit::Ns,
);
pub const LO_CLOSE: Entry = Entry::new(
    "network.loopback.close",
    "TCP connection tear-down, 127.0.0.1",
    CLOSE,
    Unit::Ns,
);
pub const LO_BW: Entry = Entry::new(
    "network.loopback.bandwidth",
    "TCP bandwidth, 127.0.0.1",
    BW,
    Unit::BytesPerS,
);
pub const VETH_RTT: Entry = Entry::new(
    "network.veth.rtt",
    "TCP round trip, veth to a namespace",
    VETH,
    Unit::Ns,
);
pub const VETH_CONNECT: Entry = Entry::new(
    "network.veth.connect",
    "TCP connection set-up, veth",
    VETH,
    Unit::Ns,
);
pub const VETH_CLOSE: Entry = Entry::new(
    "network.veth.close",
    "TCP connection tear-down, veth",
    VETH,
    Unit::Ns,
);
pub const VETH_BW: Entry = Entry::new(
    "network.veth.bandwidth",
    "TCP bandwidth, veth",
    VETH,
    Unit::BytesPerS,
);
pub const NETEM_RTT: Entry = Entry::new(
    "network.netem.rtt",
    "TCP round trip, veth with netem delay",
    "The veth round trip with `tc netem` delaying each packet leaving the host side by \
     --netem DELAY: an emulated remote host (skipped without --netem or without netem in the \
     kernel).",
    Unit::Ns,
);

/// Bytes per bandwidth sample: a few milliseconds, to fall between other processes' turns.
fn bulk_bytes(quick: bool) -> u64 {
    if quick {
        4 << 20
    } else {
        16 << 20
    }
}

fn run(ctx: &mut Context, sink: &mut Sink) {
    let mut facts = NetworkFacts::default();
    let bulk = bulk_bytes(ctx.quick());
    // The client on one CPU and the server on another where there are two: on one CPU the
    // woken server would run before a close or a write returns, and whether it does would
    // depend on where the scheduler put it.
    let client = ctx.cpus[0];
    let server_cpu = ctx.cpus.get(1).copied().unwrap_or(client);
    let _pin = Pinned::to(&[client]);
    facts.cpus = Some(format!(
        "client on CPU {client}, server on CPU {server_cpu}"
    ));

    loopback(ctx, sink, server_cpu, bulk);
    second_namespace(ctx, sink, server_cpu, bulk, &mut facts);
    sink.findings.network = Some(facts);
}

/// Loopback, IPv4 and IPv6, with the server on `server_cpu`.
fn loopback(ctx: &mut Context, sink: &mut Sink, server_cpu: usize, bulk: u64) {
    let lo = [&LO_RTT, &LO_CONNECT, &LO_CLOSE, &LO_BW];
    if lo.iter().any(|e| ctx.wants(e)) {
        let mut server =
            tcp::Server::spawn(server_cpu, || Ok("127.0.0.1:0".parse().expect("address")));
        match server.addr() {
            Ok(addr) => measure_all(
                ctx,
                sink,
                addr,
                [&LO_RTT, &LO_CONNECT, &LO_CLOSE, &LO_BW],
                bulk,
            ),
            Err(e) => ctx.skip(sink, &lo, &format!("cannot listen on 127.0.0.1: {e}")),
        }
    }
    if ctx.wants(&LO6_RTT) {
        let mut server = tcp::Server::spawn(server_cpu, || Ok("[::1]:0".parse().expect("address")));
        let m = match server.addr() {
            Ok(addr) => tcp::rtt(ctx, &LO6_RTT, addr),
            Err(e) => skipped(
                &LO6_RTT,
                None,
                format!("cannot listen on ::1 (IPv6 off?): {e}"),
            ),
        };
        sink.measurements.push(m);
        ctx.finished(&LO6_RTT);
    }
}

/// The second namespace: the veth pair, and netem on it; what was found in `facts`.
fn second_namespace(
    ctx: &mut Context,
    sink: &mut Sink,
    server_cpu: usize,
    bulk: u64,
    facts: &mut NetworkFacts,
) {
    let veth = [&VETH_RTT, &VETH_CONNECT, &VETH_CLOSE, &VETH_BW, &NETEM_RTT];
    if veth.iter().any(|e| ctx.wants(e)) {
        match netns::Veth::create(server_cpu) {
            Ok(mut v) => {
                facts.veth = Some(format!(
                    "{} ({}) <-> {} in a namespace of its own",
                    v.host_if, v.host_addr, v.peer_addr
                ));
                measure_all(
                    ctx,
                    sink,
                    v.server_addr,
                    [&VETH_RTT, &VETH_CONNECT, &VETH_CLOSE, &VETH_BW],
                    bulk,
                );
                let netem = v.netem_available();
                facts.netem = Some(match &netem {
                    Ok(()) => "available".into(),
                    Err(e) => e.clone(),
                });
                if ctx.wants(&NETEM_RTT) {
                    let m = netem_rtt(ctx, &mut v, netem);
                    sink.measurements.push(m);
                    ctx.finished(&NETEM_RTT);
                }
            }
            Err(why) => {
                sink.notes.push(format!("network: {why}"));
                facts.veth_unavailable = Some(why.clone());
                ctx.skip(sink, &veth, &why);
            }
        }
    }
}

/// The round trip through the veth pair with netem's delay, or why it was not measured.
fn netem_rtt(ctx: &mut Context, v: &mut netns::Veth, netem: Result<(), String>) -> Measurement {
    match (netem, ctx.settings.netem) {
        (Err(e), _) => skipped(&NETEM_RTT, None, e),
        (Ok(()), None) => skipped(
            &NETEM_RTT,
            None,
            "no --netem DELAY given (netem is available here)",
        ),
        (Ok(()), Some(d)) => match v.add_delay(d) {
            Ok(()) => {
                let mut m = tcp::rtt(ctx, &NETEM_RTT, v.server_addr);
                m.details
                    .insert("netem_delay_ns".into(), d.as_nanos() as f64);
                m
            }
            Err(e) => skipped(&NETEM_RTT, None, e),
        },
    }
}

fn measure_all(ctx: &mut Context, sink: &mut Sink, addr: SocketAddr, e: [&Entry; 4], bulk: u64) {
    let [rtt, connect, close, bw] = e;
    if ctx.wants(rtt) {
        let m = tcp::rtt(ctx, rtt, addr);
        sink.measurements.push(m);
        ctx.finished(rtt);
    }
    if ctx.wants(connect) {
        let m = tcp::connect(ctx, connect, addr);
        sink.measurements.push(m);
        ctx.finished(connect);
    }
    if ctx.wants(close) {
        let m = tcp::close(ctx, close, addr);
        sink.measurements.push(m);
        ctx.finished(close);
    }
    if ctx.wants(bw) {
        let m = tcp::bandwidth(ctx, bw, addr, bulk);
        sink.measurements.push(m);
        ctx.finished(bw);
    }
}
