//! A seeded randomized stress of the goroutine runtime (the Rust API):
//! many goroutines doing a random mix of channel operations, selects,
//! sleeps, mutex-protected increments, WaitGroup rounds and readies no
//! park asked for, while channels are closed midway. The run must finish
//! (a lost wakeup is Go's "all goroutines are asleep - deadlock!", status
//! 2, or a hang the watchdog reports) and conserve everything: each value
//! sent (tagged with its sender, channel and sequence number) is received
//! exactly once, in its sender's order; the counter equals the
//! increments; every WaitGroup round sees all its goroutines done.
//!
//! Each configuration runs in a child process (this binary again, its
//! `child` test selected, the configuration in the environment), under
//! GOMAXPROCS 1, 2 and 8. The seed is `DEFERGC_STRESS_SEED`, else random,
//! and always printed; `DEFERGC_STRESS_SECS` is the time per worker count
//! (default 0.8 s; the ignored `soak_*` tests: 60 s).
//!
//! Rerun a failure with
//! `DEFERGC_STRESS_SEED=<n> cargo test --release --test go_stress`
//! (the schedule differs from run to run; the workload is the seed's).

mod cprog;

use defergc::go::{self, Chan, Goroutine, Mutex, RwMutex, Select, TryRecv, WaitGroup};
use std::cell::UnsafeCell;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---- the parent: one child process per worker count -----------------------

const CHILD_ENV: &str = "DEFERGC_STRESS_CHILD";

fn seed() -> u64 {
    match std::env::var("DEFERGC_STRESS_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("DEFERGC_STRESS_SEED={s:?} is not a u64")),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            mix(t ^ (u64::from(std::process::id()) << 32))
        }
    }
}

fn secs(default: f64) -> f64 {
    match std::env::var("DEFERGC_STRESS_SECS") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("DEFERGC_STRESS_SECS={s:?} is not a number")),
        Err(_) => default,
    }
}

/// Runs the child under `procs` workers for `secs` seconds and checks its
/// status and tallies.
fn stress(procs: usize, secs: f64) {
    let seed = seed();
    eprintln!("seed={seed} GOMAXPROCS={procs} secs={secs}");
    let rerun = format!("DEFERGC_STRESS_SEED={seed} cargo test --release --test go_stress");
    // The child's own watchdog reports a hang; this is the last resort.
    let ran = cprog::run_with_deadline(
        Command::new(std::env::current_exe().unwrap())
            .args(["child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .env("DEFERGC_STRESS_SEED", seed.to_string())
            .env("DEFERGC_STRESS_SECS", secs.to_string())
            .env("GOMAXPROCS", procs.to_string()),
        Duration::from_secs_f64(secs * 4.0 + 120.0),
    );
    let (status, text) = match ran {
        Ok(out) => (Some(out.status), cprog::text(&out)),
        Err(text) => (None, text),
    };
    let Some(status) = status else {
        panic!(
            "seed={seed} GOMAXPROCS={procs}: the child hung (killed); rerun with {rerun}\n{text}"
        );
    };
    assert!(
        status.success() && text.contains("stress ok"),
        "seed={seed} GOMAXPROCS={procs}: child failed ({status}); rerun with {rerun}\n{text}"
    );
    // The tallies the child printed agree with each other.
    let line = text
        .lines()
        .find_map(|l| l.find("tallies:").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("seed={seed}: no tallies; rerun with {rerun}\n{text}"));
    let field = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("seed={seed}: no {name} in {line:?}; rerun with {rerun}"))
    };
    assert_eq!(
        field("sent"),
        field("received"),
        "seed={seed}: {line}; rerun with {rerun}"
    );
    assert_eq!(
        field("increments"),
        field("counter"),
        "seed={seed}: {line}; rerun with {rerun}"
    );
    assert_eq!(
        field("rounds"),
        field("rounds_done"),
        "seed={seed}: {line}; rerun with {rerun}"
    );
    assert!(field("sent") > 0, "seed={seed}: nothing was sent: {line}");
    eprintln!("seed={seed} GOMAXPROCS={procs}: {line}");
}

#[test]
fn stress_1_worker() {
    stress(1, secs(0.8));
}

#[test]
fn stress_2_workers() {
    stress(2, secs(0.8));
}

#[test]
fn stress_8_workers() {
    stress(8, secs(0.8));
}

#[test]
#[ignore = "a soak: cargo test --release --test go_stress -- --ignored"]
fn soak_1_worker() {
    stress(1, secs(60.0));
}

#[test]
#[ignore = "a soak: cargo test --release --test go_stress -- --ignored"]
fn soak_2_workers() {
    stress(2, secs(60.0));
}

#[test]
#[ignore = "a soak: cargo test --release --test go_stress -- --ignored"]
fn soak_8_workers() {
    stress(8, secs(60.0));
}

/// The child's body: does nothing unless this process is a child.
#[test]
fn child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let seed = seed();
    let secs = secs(0.8);
    let ok = run_stress(seed, Duration::from_secs_f64(secs));
    // Leave at once: the checks are done, the exit status says how.
    std::process::exit(if ok { 0 } else { 1 });
}

// ---- randomness ------------------------------------------------------------

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A goroutine's own generator, derived from the seed and a stream number.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        Rng(mix(seed ^ mix(stream.wrapping_add(1))))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

// ---- the workload -----------------------------------------------------------

/// A value on the channels: who sent it, on which channel, its number in
/// that sender's sequence on that channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    sender: u32,
    chan: u32,
    seq: u64,
}

/// What may send on a channel that is closed midway: senders hold `gate`
/// shared while they decide and send; the closer takes it exclusively,
/// sets `closing`, closes. `closed` is set before the close, so a receive
/// that reports a closed channel can check it was.
struct Gate {
    gate: RwMutex,
    closing: AtomicBool,
    closed: AtomicBool,
    closable: bool,
}

/// The received values of one (channel, sender): a bit per sequence
/// number, and how many.
#[derive(Default)]
struct Tally {
    bits: Vec<u64>,
    count: u64,
}

/// A counter only the mutex protects (no atomics): lost increments show
/// if two goroutines ever hold it at once.
struct Guarded {
    mu: Mutex,
    counter: UnsafeCell<u64>,
    /// Who holds it (a check of its own): 0 when nobody does.
    owner: AtomicU64,
}

// SAFETY: counter is only touched with mu held.
unsafe impl Sync for Guarded {}

/// Goroutine handles for the readier: a ring, the newest overwriting the
/// oldest (a stale handle readies nothing).
const RING: usize = 256;

struct World {
    seed: u64,
    chans: Vec<Chan<Val>>,
    gates: Vec<Gate>,
    senders: usize,
    tallies: Vec<std::sync::Mutex<Tally>>,
    /// Values sent per (channel, sender), published when each sender ends.
    sent: Vec<AtomicU64>,
    guarded: Guarded,
    increments: AtomicU64,
    rounds: AtomicU64,
    rounds_done: AtomicU64,
    stop: AtomicBool,
    feeders_stop: AtomicBool,
    readier_stop: AtomicBool,
    handles: std::sync::Mutex<Vec<Option<Goroutine>>>,
    registered: AtomicUsize,
    errors: std::sync::Mutex<Vec<String>>,
    error_count: AtomicU64,
    // Statistics, for the report.
    ops: AtomicU64,
    selects: AtomicU64,
    sleeps: AtomicU64,
    readies: AtomicU64,
    closed_seen: AtomicU64,
    /// What each worker does now (for a hang's report).
    doing: Vec<std::sync::Mutex<&'static str>>,
}

impl World {
    fn error(&self, msg: String) {
        if self.error_count.fetch_add(1, Ordering::SeqCst) < 20 {
            self.errors.lock().unwrap().push(msg);
        }
    }

    fn register(&self) {
        if let Some(me) = Goroutine::current() {
            let i = self.registered.fetch_add(1, Ordering::Relaxed) % RING;
            self.handles.lock().unwrap()[i] = Some(me);
        }
    }

    fn key(&self, chan: usize, sender: usize) -> usize {
        chan * self.senders + sender
    }
}

/// A receiver's view: the last sequence number it saw per (channel,
/// sender), plus one (0: none yet).
struct Receiver {
    last: Vec<u64>,
    who: String,
}

impl Receiver {
    fn new(w: &World, who: String) -> Receiver {
        Receiver {
            last: vec![0; w.chans.len() * w.senders],
            who,
        }
    }

    /// A receive on channel `c` gave `v` (`None`: closed).
    fn got(&mut self, w: &World, c: usize, v: Option<Val>, how: &str) {
        let Some(v) = v else {
            w.closed_seen.fetch_add(1, Ordering::Relaxed);
            if !w.gates[c].closed.load(Ordering::SeqCst) {
                w.error(format!(
                    "{}: {how} on channel {c} reported it closed, and it is not",
                    self.who
                ));
            }
            return;
        };
        if v.chan as usize != c || v.sender as usize >= w.senders {
            w.error(format!(
                "{}: {how} on channel {c} received {v:?}, which was not sent there",
                self.who
            ));
            return;
        }
        let k = w.key(c, v.sender as usize);
        if self.last[k] > v.seq {
            w.error(format!(
                "{}: {how} on channel {c} received {v:?} after seq {} of the same sender (FIFO broken)",
                self.who,
                self.last[k] - 1
            ));
        }
        self.last[k] = v.seq + 1;
        let mut t = w.tallies[k].lock().unwrap();
        let (word, bit) = ((v.seq / 64) as usize, v.seq % 64);
        if t.bits.len() <= word {
            t.bits.resize(word + 1, 0);
        }
        if t.bits[word] & (1 << bit) != 0 {
            w.error(format!(
                "{}: {how} on channel {c} received {v:?} a second time",
                self.who
            ));
        }
        t.bits[word] |= 1 << bit;
        t.count += 1;
    }
}

/// A sender's sequence numbers, per channel.
struct Sender {
    id: usize,
    next: Vec<u64>,
}

impl Sender {
    fn val(&self, c: usize) -> Val {
        Val {
            sender: self.id as u32,
            chan: c as u32,
            seq: self.next[c],
        }
    }

    fn publish(&self, w: &World) {
        for (c, &n) in self.next.iter().enumerate() {
            w.sent[w.key(c, self.id)].store(n, Ordering::SeqCst);
        }
    }
}

/// Takes the right to send on each channel of `chans` that allows it (the
/// gate of a closable one, shared); returns those it may send on. Release
/// with [`release`].
fn permit(w: &World, chans: &[usize]) -> Vec<usize> {
    let mut ok = Vec::with_capacity(chans.len());
    for &c in chans {
        let g = &w.gates[c];
        if g.closable {
            g.gate.rlock();
            if g.closing.load(Ordering::SeqCst) {
                g.gate.runlock();
                continue;
            }
        } else if g.closed.load(Ordering::SeqCst) {
            // Only the final close (after every sender ended) closes it.
            w.error(format!("channel {c} closed while senders run"));
            continue;
        }
        ok.push(c);
    }
    ok
}

fn release(w: &World, permitted: &[usize]) {
    for &c in permitted {
        if w.gates[c].closable {
            w.gates[c].gate.runlock();
        }
    }
}

/// `n` distinct channels, in increasing order.
fn pick_chans(rng: &mut Rng, k: usize, n: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..k).collect();
    for i in 0..k {
        let j = i + rng.below((k - i) as u64) as usize;
        all.swap(i, j);
    }
    let mut some = all[..n].to_vec();
    some.sort_unstable();
    some
}

fn sleep_checked(w: &World, rng: &mut Rng, max_us: u64, who: &str) {
    let d = Duration::from_micros(rng.below(max_us + 1));
    let t = Instant::now();
    go::sleep(d);
    let took = t.elapsed();
    if took < d {
        w.error(format!("{who}: sleep({d:?}) returned after {took:?}"));
    }
    w.sleeps.fetch_add(1, Ordering::Relaxed);
}

fn increment(w: &World, rng: &mut Rng, me: u64) {
    let g = &w.guarded;
    if !(rng.chance(20) && g.mu.try_lock()) {
        g.mu.lock();
    }
    let before = g.owner.swap(me, Ordering::SeqCst);
    if before != 0 {
        w.error(format!("goroutine {me} locked the mutex held by {before}"));
    }
    // SAFETY: the mutex is held.
    let v = unsafe { *g.counter.get() };
    match rng.below(8) {
        0 => go::gosched(),
        1 => go::sleep(Duration::from_micros(rng.below(5))),
        _ => {}
    }
    // SAFETY: as above.
    unsafe { *g.counter.get() = v + 1 };
    g.owner.store(0, Ordering::SeqCst);
    g.mu.unlock();
    w.increments.fetch_add(1, Ordering::Relaxed);
}

/// A WaitGroup round: `n` goroutines that each do a little, then Done; the
/// waiter must see all of them done.
fn wg_round(w: &Arc<World>, rng: &mut Rng, stream: u64) {
    let n = 1 + rng.below(6);
    let wg = Arc::new(WaitGroup::new());
    let done = Arc::new(AtomicU64::new(0));
    wg.add(n as i32).unwrap();
    w.rounds.fetch_add(1, Ordering::Relaxed);
    for i in 0..n {
        let (w, wg, done) = (w.clone(), wg.clone(), done.clone());
        let mut r = Rng::new(w.seed, stream.wrapping_mul(64).wrapping_add(i) | 1 << 62);
        go::go(move || {
            w.register();
            let me = go::goid();
            match r.below(4) {
                0 => increment(&w, &mut r, me),
                1 => sleep_checked(&w, &mut r, 20, "wg child"),
                2 => {
                    let c = r.below(w.chans.len() as u64) as usize;
                    let mut rx = Receiver::new(&w, format!("wg child {me}"));
                    match w.chans[c].try_recv() {
                        TryRecv::Value(v) => rx.got(&w, c, Some(v), "try_recv"),
                        TryRecv::Closed => rx.got(&w, c, None, "try_recv"),
                        TryRecv::Empty => {}
                    }
                }
                _ => go::gosched(),
            }
            done.fetch_add(1, Ordering::SeqCst);
            wg.done().unwrap();
        });
    }
    wg.wait();
    let seen = done.load(Ordering::SeqCst);
    if seen != n {
        w.error(format!("WaitGroup.Wait returned with {seen} of {n} done"));
    } else {
        w.rounds_done.fetch_add(1, Ordering::Relaxed);
    }
}

fn worker(w: Arc<World>, id: usize, wg: Arc<WaitGroup>) {
    w.register();
    let mut rng = Rng::new(w.seed, id as u64);
    let k = w.chans.len();
    let me = go::goid();
    let mut tx = Sender {
        id,
        next: vec![0; k],
    };
    let mut rx = Receiver::new(&w, format!("worker {id}"));
    let mut rounds = 0u64;
    let doing = |what: &'static str| *w.doing[id].lock().unwrap() = what;
    while !w.stop.load(Ordering::Relaxed) {
        w.ops.fetch_add(1, Ordering::Relaxed);
        let op = rng.below(100);
        match op {
            // A blocking send.
            0..=14 => {
                let c = rng.below(k as u64) as usize;
                let p = permit(&w, &[c]);
                if !p.is_empty() {
                    doing("send");
                    w.chans[c].send(tx.val(c));
                    tx.next[c] += 1;
                }
                release(&w, &p);
            }
            // A blocking receive.
            15..=29 => {
                let c = rng.below(k as u64) as usize;
                doing("recv");
                let v = w.chans[c].recv();
                rx.got(&w, c, v, "recv");
            }
            30..=37 => {
                let c = rng.below(k as u64) as usize;
                let p = permit(&w, &[c]);
                if !p.is_empty() && w.chans[c].try_send(tx.val(c)).is_ok() {
                    tx.next[c] += 1;
                }
                release(&w, &p);
            }
            38..=45 => {
                let c = rng.below(k as u64) as usize;
                match w.chans[c].try_recv() {
                    TryRecv::Value(v) => rx.got(&w, c, Some(v), "try_recv"),
                    TryRecv::Closed => rx.got(&w, c, None, "try_recv"),
                    TryRecv::Empty => {}
                }
            }
            // A select over some channels, each a send or a receive case.
            46..=72 => {
                let n = 1 + rng.below(k as u64) as usize;
                let chans = pick_chans(&mut rng, k, n);
                let want_send: Vec<bool> = chans.iter().map(|_| rng.chance(50)).collect();
                let to_send: Vec<usize> = chans
                    .iter()
                    .zip(&want_send)
                    .filter(|(_, &s)| s)
                    .map(|(&c, _)| c)
                    .collect();
                let p = permit(&w, &to_send);
                let mut sel = Select::new();
                let mut cases = Vec::new();
                for (&c, &s) in chans.iter().zip(&want_send) {
                    if s {
                        if p.contains(&c) {
                            cases.push((c, true, sel.send(&w.chans[c], tx.val(c))));
                        }
                    } else {
                        cases.push((c, false, sel.recv(&w.chans[c])));
                    }
                }
                let blocking = !rng.chance(25);
                if !cases.is_empty() {
                    doing("select");
                    let chosen = if blocking {
                        Some(sel.wait())
                    } else {
                        sel.try_wait()
                    };
                    if let Some(i) = chosen {
                        let &(c, is_send, _) = cases.iter().find(|x| x.2 == i).unwrap();
                        if is_send {
                            tx.next[c] += 1;
                        } else {
                            let v = sel.received::<Val>(i);
                            rx.got(&w, c, v, "select");
                        }
                    }
                    w.selects.fetch_add(1, Ordering::Relaxed);
                }
                drop(sel);
                release(&w, &p);
            }
            73..=82 => {
                doing("sleep");
                sleep_checked(&w, &mut rng, 50, "worker");
            }
            83..=94 => {
                doing("mutex");
                increment(&w, &mut rng, me);
            }
            95..=97 => {
                doing("waitgroup");
                rounds += 1;
                wg_round(&w, &mut rng, (id as u64) << 32 | rounds);
            }
            _ => go::gosched(),
        }
        doing("");
    }
    tx.publish(&w);
    *w.doing[id].lock().unwrap() = "ended";
    wg.done().unwrap();
}

/// Keeps channel `c` supplied, so that blocking receives on it end,
/// until told to stop or the channel closes.
fn feeder(w: Arc<World>, c: usize, id: usize, wg: Arc<WaitGroup>) {
    w.register();
    let mut rng = Rng::new(w.seed, 1000 + id as u64);
    let mut tx = Sender {
        id,
        next: vec![0; w.chans.len()],
    };
    while !w.feeders_stop.load(Ordering::Relaxed) {
        let p = permit(&w, &[c]);
        if p.is_empty() {
            break;
        }
        w.chans[c].send(tx.val(c));
        tx.next[c] += 1;
        release(&w, &p);
        match rng.below(4) {
            0 => go::sleep(Duration::from_micros(rng.below(20))),
            1 => go::gosched(),
            _ => {}
        }
    }
    tx.publish(&w);
    wg.done().unwrap();
}

/// Keeps channel `c` drained, so that blocking sends on it end, until it
/// is closed and empty.
fn drainer(w: Arc<World>, c: usize, wg: Arc<WaitGroup>) {
    w.register();
    let mut rng = Rng::new(w.seed, 2000 + c as u64);
    let mut rx = Receiver::new(&w, format!("drainer {c}"));
    loop {
        let v = if rng.chance(20) {
            match w.chans[c].try_recv() {
                TryRecv::Value(v) => Some(v),
                TryRecv::Closed => None,
                TryRecv::Empty => {
                    go::gosched();
                    continue;
                }
            }
        } else {
            w.chans[c].recv()
        };
        let end = v.is_none();
        rx.got(&w, c, v, "drain");
        if end {
            break;
        }
        if rng.chance(10) {
            go::sleep(Duration::from_micros(rng.below(20)));
        }
    }
    wg.done().unwrap();
}

/// Closes channel `c` the gate's way.
fn close_gated(w: &World, c: usize) {
    let g = &w.gates[c];
    g.gate.lock();
    g.closing.store(true, Ordering::SeqCst);
    g.closed.store(true, Ordering::SeqCst);
    w.chans[c].close();
    g.gate.unlock();
}

/// Readies goroutines that did not ask for it, in bursts with quiet spells
/// between, until `until` (40 to 70% of the run): a wakeup the runtime
/// loses after that is not hidden by a ready, it is a deadlock or a hang.
fn readier(w: Arc<World>, until: Duration, wg: Arc<WaitGroup>) {
    let mut rng = Rng::new(w.seed, 3000);
    let start = Instant::now();
    while !w.readier_stop.load(Ordering::Relaxed) && start.elapsed() < until {
        let burst = rng.below(200);
        for _ in 0..burst {
            let picked: Vec<Goroutine> = {
                let h = w.handles.lock().unwrap();
                (0..4)
                    .filter_map(|_| h[rng.below(RING as u64) as usize])
                    .collect()
            };
            for g in picked {
                g.ready();
                w.readies.fetch_add(1, Ordering::Relaxed);
            }
            go::gosched();
            if w.readier_stop.load(Ordering::Relaxed) {
                break;
            }
        }
        go::sleep(Duration::from_micros(rng.below(2000)));
    }
    wg.done().unwrap();
}

/// One run; true if every check passed. Prints `tallies:` and `stress ok`.
fn run_stress(seed: u64, duration: Duration) -> bool {
    let mut rng = Rng::new(seed, u64::MAX);
    let k = 3 + rng.below(3) as usize;
    let workers = 32 + rng.below(33) as usize;
    let mut caps: Vec<usize> = (0..k)
        .map(|_| [0, 0, 1, 2, 3, 4][rng.below(6) as usize])
        .collect();
    caps[1] = 0;
    caps[2] = 1 + rng.below(4) as usize;
    // Channel 0 closes midway, and with four or more channels the last too.
    let closable: Vec<bool> = (0..k).map(|c| c == 0 || (k >= 4 && c == k - 1)).collect();
    let senders = workers + k;
    eprintln!(
        "seed={seed} GOMAXPROCS={} workers={workers} caps={caps:?} closable={closable:?} duration={duration:?}",
        go::gomaxprocs()
    );
    let w = Arc::new(World {
        seed,
        chans: caps.iter().map(|&c| Chan::new(c)).collect(),
        gates: closable
            .iter()
            .map(|&closable| Gate {
                gate: RwMutex::new(),
                closing: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                closable,
            })
            .collect(),
        senders,
        tallies: (0..k * senders).map(|_| Default::default()).collect(),
        sent: (0..k * senders).map(|_| AtomicU64::new(0)).collect(),
        guarded: Guarded {
            mu: Mutex::new(),
            counter: UnsafeCell::new(0),
            owner: AtomicU64::new(0),
        },
        increments: AtomicU64::new(0),
        rounds: AtomicU64::new(0),
        rounds_done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        feeders_stop: AtomicBool::new(false),
        readier_stop: AtomicBool::new(false),
        handles: std::sync::Mutex::new(vec![None; RING]),
        registered: AtomicUsize::new(0),
        errors: std::sync::Mutex::new(Vec::new()),
        error_count: AtomicU64::new(0),
        ops: AtomicU64::new(0),
        selects: AtomicU64::new(0),
        sleeps: AtomicU64::new(0),
        readies: AtomicU64::new(0),
        closed_seen: AtomicU64::new(0),
        doing: (0..workers).map(|_| std::sync::Mutex::new("")).collect(),
    });

    // The watchdog: a plain thread that reports a run that does not end.
    let finished = Arc::new(AtomicBool::new(false));
    {
        let (w, finished) = (w.clone(), finished.clone());
        let grace = duration * 3 + Duration::from_secs(10);
        std::thread::spawn(move || {
            let t = Instant::now();
            while t.elapsed() < grace {
                std::thread::sleep(Duration::from_millis(50));
                if finished.load(Ordering::SeqCst) {
                    return;
                }
            }
            let stuck: Vec<String> = w
                .doing
                .iter()
                .enumerate()
                .map(|(i, d)| (i, *d.lock().unwrap()))
                .filter(|(_, d)| *d != "ended")
                .map(|(i, d)| format!("worker {i}: {d:?}"))
                .collect();
            eprintln!(
                "HANG: seed={seed}: not done after {:?} (stop={} feeders_stop={} readier_stop={}); workers not ended: {stuck:?}",
                t.elapsed(),
                w.stop.load(Ordering::SeqCst),
                w.feeders_stop.load(Ordering::SeqCst),
                w.readier_stop.load(Ordering::SeqCst),
            );
            std::process::exit(3);
        });
    }

    let main_w = w.clone();
    let status = go::run(move || {
        let w = main_w;
        w.register();
        let (workers_wg, feeders_wg, drainers_wg, others_wg) = (
            Arc::new(WaitGroup::new()),
            Arc::new(WaitGroup::new()),
            Arc::new(WaitGroup::new()),
            Arc::new(WaitGroup::new()),
        );
        drainers_wg.add(k as i32).unwrap();
        for c in 0..k {
            let (w, wg) = (w.clone(), drainers_wg.clone());
            go::go(move || drainer(w, c, wg));
        }
        feeders_wg.add(k as i32).unwrap();
        for c in 0..k {
            let (w, wg) = (w.clone(), feeders_wg.clone());
            go::go(move || feeder(w, c, workers + c, wg));
        }
        workers_wg.add(workers as i32).unwrap();
        for id in 0..workers {
            let (w, wg) = (w.clone(), workers_wg.clone());
            go::go(move || worker(w, id, wg));
        }
        others_wg.add(2).unwrap();
        {
            let (w, wg) = (w.clone(), others_wg.clone());
            let until = duration.mul_f64(0.4 + Rng::new(seed, 3001).below(300) as f64 / 1000.0);
            go::go(move || readier(w, until, wg));
        }
        // The closer: closes the closable channels at random times in the
        // run's middle.
        {
            let (w, wg) = (w.clone(), others_wg.clone());
            let mut rng = Rng::new(seed, 4000);
            go::go(move || {
                w.register();
                let start = Instant::now();
                for c in (0..k).filter(|&c| w.gates[c].closable) {
                    let at = duration.mul_f64(0.2 + rng.below(500) as f64 / 1000.0);
                    if let Some(d) = at.checked_sub(start.elapsed()) {
                        go::sleep(d);
                    }
                    close_gated(&w, c);
                }
                wg.done().unwrap();
            });
        }
        go::sleep(duration);
        // The end: workers finish their operation (feeders and drainers
        // still serve them), then feeders stop, then the channels close.
        w.stop.store(true, Ordering::SeqCst);
        workers_wg.wait();
        w.feeders_stop.store(true, Ordering::SeqCst);
        feeders_wg.wait();
        w.readier_stop.store(true, Ordering::SeqCst);
        others_wg.wait();
        for c in 0..k {
            if !w.gates[c].closed.load(Ordering::SeqCst) {
                close_gated(&w, c);
            }
        }
        drainers_wg.wait();
    });
    finished.store(true, Ordering::SeqCst);
    assert_eq!(status, 0);

    // Conservation.
    let mut sent = 0u64;
    let mut received = 0u64;
    for c in 0..k {
        for s in 0..senders {
            let key = w.key(c, s);
            let n = w.sent[key].load(Ordering::SeqCst);
            let t = w.tallies[key].lock().unwrap();
            sent += n;
            received += t.count;
            if t.count != n {
                w.error(format!(
                    "channel {c} sender {s}: {n} sent, {} received",
                    t.count
                ));
            }
            let beyond = t
                .bits
                .iter()
                .enumerate()
                .any(|(i, &b)| (0..64).any(|j| b & (1 << j) != 0 && (i * 64 + j) as u64 >= n));
            if beyond {
                w.error(format!(
                    "channel {c} sender {s}: received a value never sent"
                ));
            }
        }
    }
    // SAFETY: every goroutine that touched it is done.
    let counter = unsafe { *w.guarded.counter.get() };
    println!(
        "tallies: sent={sent} received={received} increments={} counter={counter} rounds={} rounds_done={} ops={} selects={} sleeps={} readies={} closed_seen={}",
        w.increments.load(Ordering::SeqCst),
        w.rounds.load(Ordering::SeqCst),
        w.rounds_done.load(Ordering::SeqCst),
        w.ops.load(Ordering::SeqCst),
        w.selects.load(Ordering::SeqCst),
        w.sleeps.load(Ordering::SeqCst),
        w.readies.load(Ordering::SeqCst),
        w.closed_seen.load(Ordering::SeqCst),
    );
    let errors = w.error_count.load(Ordering::SeqCst);
    if errors == 0
        && sent == received
        && counter == w.increments.load(Ordering::SeqCst)
        && w.rounds.load(Ordering::SeqCst) == w.rounds_done.load(Ordering::SeqCst)
    {
        println!("stress ok");
        true
    } else {
        for e in w.errors.lock().unwrap().iter() {
            eprintln!("FAIL: {e}");
        }
        eprintln!("FAIL: seed={seed}: {errors} errors");
        false
    }
}
