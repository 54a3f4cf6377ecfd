//! Go's `runtime/pprof` for goroutines: profiler labels and the CPU
//! profile.
//!
//! # Labels
//!
//! A goroutine (or a thread's own context) carries a label set: key/value
//! pairs, sorted by key, immutable once made ([`do_with_labels`] is
//! `pprof.Do`, [`set_goroutine_labels`] `pprof.SetGoroutineLabels`,
//! [`goroutine_labels`] what `pprof.ForLabels` walks). A goroutine starts
//! with the label set of the context that started it: the pointer is
//! copied at `go` (one reference more), never the pairs. The set is
//! reference-counted and lives in its context's slot; the profiling
//! signal's handler reads the current context's pointer (one load, no
//! allocation) and records it with the sample. So that it is still there
//! when the profile is written, a label set whose last reference goes
//! while a profile is on is kept until that profile has been written.
//!
//! # The CPU profile
//!
//! [`start_cpu_profile`] (Go's `pprof.StartCPUProfile`) starts the
//! profiling signal's timers on every worker thread and on the calling
//! thread (`signal::cpu`), and a reader thread that drains the sample
//! ring every [`DRAIN_EVERY`] and counts samples by stack and label set.
//! [`stop_cpu_profile`] stops the timers, waits for the handlers still
//! running, drains the rest and writes the profile (`prof::cpu`:
//! symbolised then, off the signal path). One profile at a time, as in
//! Go: a second start is an error, and so is a stop with none started.

use super::procs;
use crate::context::{self, Context, Key};
use crate::prof::cpu::Counts;
use crate::signal::cpu::{self as sigprof, Refused};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// A label set: its pairs, sorted by key, keys unique.
type Pairs = Vec<(String, String)>;

/// The label-set slot of every context (a raw `Arc<Pairs>`, or null).
static LABELS: Key = Key::new(6, release_slot);

unsafe fn release_slot(_ctx: &Context, set: *mut u8) {
    release(set as usize);
}

/// While a profile is on or being written, label sets whose last
/// reference went: freed once it has been written. `None`: no profile,
/// free at once.
static KEPT: Mutex<Option<Vec<usize>>> = Mutex::new(None);

/// Takes one reference to the label set `set` (non-zero).
fn retain(set: usize) {
    // SAFETY: a set stored in a slot holds a reference: it is live.
    unsafe { Arc::increment_strong_count(set as *const Pairs) };
}

/// Gives back one reference to the label set `set` (0: none).
fn release(set: usize) {
    if set == 0 {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    match kept.as_mut() {
        Some(list) => list.push(set),
        // SAFETY: the reference given back was taken by into_raw or
        // retain.
        None => drop(unsafe { Arc::from_raw(set as *const Pairs) }),
    }
}

/// The pairs of the label set `set` (0: none), while it is live.
fn pairs_of(set: usize) -> Pairs {
    // SAFETY: a set named by a sample is kept until its profile is
    // written (KEPT), and one in a slot is live.
    unsafe { (set as *const Pairs).as_ref() }
        .cloned()
        .unwrap_or_default()
}

/// The current context's label set (0: none).
fn current_set() -> usize {
    context::current().get(&LABELS) as usize
}

/// Makes `set` (one reference, owned by the caller) the current
/// context's label set, and returns the one it replaces (its reference
/// now the caller's).
fn swap_current(set: usize) -> usize {
    let ctx = context::current();
    let old = ctx.get(&LABELS) as usize;
    ctx.set(&LABELS, set as *mut u8);
    old
}

/// A new goroutine's context starts with the label set of the context
/// that starts it (`spawn.rs`).
pub(crate) fn inherit(child: &Context) {
    let Some(parent) = context::existing() else {
        return;
    };
    let set = parent.get(&LABELS) as usize;
    if set != 0 {
        retain(set);
        child.set(&LABELS, set as *mut u8);
    }
}

/// A new label set: `base`'s pairs with `pairs` added (a key already
/// there takes its new value).
fn with_pairs(base: usize, pairs: &[(&str, &str)]) -> usize {
    let mut all = pairs_of(base);
    for &(k, v) in pairs {
        match all.binary_search_by(|(key, _)| key.as_str().cmp(k)) {
            Ok(i) => all[i].1 = v.to_string(),
            Err(i) => all.insert(i, (k.to_string(), v.to_string())),
        }
    }
    if all.is_empty() {
        return 0;
    }
    Arc::into_raw(Arc::new(all)) as usize
}

/// Go's `pprof.Do`: runs `f` with the current goroutine's labels plus
/// `pairs` (a key already set takes its new value), then puts the
/// goroutine's labels back, also when `f` unwinds. Goroutines `f` starts
/// keep the labels.
///
/// ```
/// use defergc::go::pprof;
/// let seen = pprof::do_with_labels(&[("request", "GET /")], pprof::goroutine_labels);
/// assert_eq!(seen, [("request".to_string(), "GET /".to_string())]);
/// assert!(pprof::goroutine_labels().is_empty());
/// ```
pub fn do_with_labels<R>(pairs: &[(&str, &str)], f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            release(swap_current(self.0));
        }
    }
    let set = with_pairs(current_set(), pairs);
    let _restore = Restore(swap_current(set));
    f()
}

/// Go's `pprof.SetGoroutineLabels`: the current goroutine's labels
/// become exactly `pairs` (none: no labels).
pub fn set_goroutine_labels(pairs: &[(&str, &str)]) {
    release(swap_current(with_pairs(0, pairs)));
}

/// The current goroutine's labels, sorted by key.
pub fn goroutine_labels() -> Vec<(String, String)> {
    pairs_of(current_set())
}

/// Go's `pprof.Label`: the value of the current goroutine's label `key`.
pub fn goroutine_label(key: &str) -> Option<String> {
    goroutine_labels()
        .into_iter()
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// What the profiling signal's handler asks of the go layer (see
/// `signal::cpu::WhereHook`): the stack of the goroutine running on this
/// thread and the current label set. Async-signal-safe: constant
/// thread-locals and loads.
fn where_now(_sp: usize) -> (usize, usize, usize) {
    let labels = context::existing().map_or(0, |c| c.peek(&LABELS) as usize);
    let Some(g) = procs::current_g() else {
        return (0, 0, labels);
    };
    let Some(geometry) = super::stack::geometry_if_set() else {
        return (0, 0, labels);
    };
    (g.slot.lo(&geometry), g.slot.end(&geometry), labels)
}

/// Go's default CPU profiling rate: samples a second of CPU time.
pub const DEFAULT_CPU_PROFILE_RATE: u32 = 100;

/// The rate of the next profile.
static HZ: AtomicU32 = AtomicU32::new(DEFAULT_CPU_PROFILE_RATE);

/// How often the reader drains the sample ring.
pub const DRAIN_EVERY: Duration = Duration::from_millis(50);

/// Why a CPU profile did not start, stop or write.
#[derive(Debug)]
pub enum ProfileError {
    /// A profile is on already (Go's "cpu profiling already in use").
    AlreadyProfiling,
    /// No profile is on.
    NotProfiling,
    /// The rate is out of range (1 to 1,000,000 a second).
    BadRate,
    /// The profile could not be written.
    Io(std::io::Error),
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::AlreadyProfiling => f.write_str("defergc: cpu profiling already in use"),
            ProfileError::NotProfiling => f.write_str("defergc: cpu profiling is not on"),
            ProfileError::BadRate => f.write_str("defergc: cpu profile rate out of range"),
            ProfileError::Io(e) => write!(f, "defergc: cannot write the cpu profile: {e}"),
        }
    }
}

impl std::error::Error for ProfileError {}

/// Go's `runtime.SetCPUProfileRate`: samples a second of CPU time for
/// the next profile (1 to 1,000,000; default 100). Refused while a
/// profile is on, as Go refuses. Returns the previous rate.
pub fn set_cpu_profile_rate(hz: u32) -> Result<u32, ProfileError> {
    if !(1..=1_000_000).contains(&hz) {
        return Err(ProfileError::BadRate);
    }
    let profiler = PROFILER.lock().unwrap_or_else(|e| e.into_inner());
    if profiler.is_some() {
        return Err(ProfileError::AlreadyProfiling);
    }
    Ok(HZ.swap(hz, Ordering::Relaxed))
}

/// The rate the next profile samples at.
pub fn cpu_profile_rate() -> u32 {
    HZ.load(Ordering::Relaxed)
}

/// A profile being taken.
struct Profiler {
    out: Box<dyn Write + Send>,
    started: Instant,
    period: i64,
    stop: Arc<AtomicBool>,
    reader: std::thread::JoinHandle<Counts>,
}

static PROFILER: Mutex<Option<Profiler>> = Mutex::new(None);

/// Drains the ring into `counts`.
fn drain(counts: &mut Counts) {
    let ring = sigprof::ring();
    let mut stack = Vec::with_capacity(crate::prof::ring::DEPTH);
    while let Some(set) = ring.pop(&mut stack) {
        counts.add(&stack, set);
    }
    counts.lost += ring.take_lost();
}

/// Go's `pprof.StartCPUProfile`: samples every thread that runs
/// goroutines, and the calling thread, at [`cpu_profile_rate`] until
/// [`stop_cpu_profile`], which writes the profile to `out`.
pub fn start_cpu_profile(out: impl Write + Send + 'static) -> Result<(), ProfileError> {
    static HOOKS: Once = Once::new();
    HOOKS.call_once(|| {
        sigprof::set_where_hook(where_now);
        crate::gc::fork::on_fork(&FORK);
    });
    let mut profiler = PROFILER.lock().unwrap_or_else(|e| e.into_inner());
    if profiler.is_some() {
        return Err(ProfileError::AlreadyProfiling);
    }
    {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.get_or_insert_with(Vec::new);
    }
    let hz = HZ.load(Ordering::Relaxed).max(1);
    let period = 1_000_000_000 / i64::from(hz);
    // Whatever an earlier profile's handlers left behind is not this
    // profile's.
    drain(&mut Counts::default());
    if sigprof::start(period) == Err(Refused::Already) {
        return Err(ProfileError::AlreadyProfiling);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let reader = std::thread::Builder::new()
        .name("defergc-pprof".into())
        .spawn(move || {
            let mut counts = Counts::default();
            while !stopping.load(Ordering::Acquire) {
                drain(&mut counts);
                std::thread::park_timeout(DRAIN_EVERY);
            }
            counts
        })
        .map_err(ProfileError::Io)?;
    *profiler = Some(Profiler {
        out: Box::new(out),
        started: Instant::now(),
        period,
        stop,
        reader,
    });
    Ok(())
}

/// [`start_cpu_profile`] into the file `path` (created now).
pub fn start_cpu_profile_to(path: &std::path::Path) -> Result<(), ProfileError> {
    let file = std::fs::File::create(path).map_err(ProfileError::Io)?;
    start_cpu_profile(std::io::BufWriter::new(file))
}

/// Go's `pprof.StopCPUProfile`: stops sampling and writes the profile
/// (an error if none is on, or if it could not be written).
pub fn stop_cpu_profile() -> Result<(), ProfileError> {
    let mut profiler = PROFILER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(p) = profiler.take() else {
        return Err(ProfileError::NotProfiling);
    };
    let duration = p.started.elapsed();
    let _ = sigprof::stop();
    p.stop.store(true, Ordering::Release);
    p.reader.thread().unpark();
    let mut counts = p.reader.join().unwrap_or_default();
    drain(&mut counts);
    let mut out = p.out;
    let written = crate::prof::cpu::write(&counts, p.period, duration, pairs_of, &mut out)
        .and_then(|()| out.flush());
    drop(out);
    // The label sets the samples named are no longer needed.
    let kept = KEPT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    for set in kept {
        // SAFETY: each kept set is a reference given back (release).
        drop(unsafe { Arc::from_raw(set as *const Pairs) });
    }
    written.map_err(ProfileError::Io)
}

/// Makes the calling thread one that CPU profiles sample (now, if one is
/// on, and in every later profile), until it exits. Worker threads and
/// the thread that starts a profile are sampled without asking; a thread
/// of the program's own that runs code worth profiling asks here (as
/// every thread that runs Go code is one of Go's Ms, sampled).
pub fn profile_this_thread() {
    sigprof::register();
}

/// Whether a CPU profile is on.
pub fn cpu_profiling() -> bool {
    PROFILER.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Samples the profiling signal took in the profile now on (lost ones
/// included): for tests and the command's report.
pub fn cpu_samples_taken() -> i64 {
    sigprof::taken()
}

/// A CPU profile's samples, decoded: each sample's function names
/// (innermost first), values (`samples`, `cpu` nanoseconds) and labels.
#[allow(clippy::type_complexity)]
pub fn decode_cpu_profile(
    bytes: &[u8],
) -> Option<Vec<(Vec<String>, Vec<i64>, Vec<(String, String)>)>> {
    crate::prof::builder::decode_labelled(bytes)
}

static FORK: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
    prepare: fork_prepare,
    child: fork_child,
    ..crate::gc::fork::ForkHooks::NONE
};

fn fork_prepare() {
    crate::gc::fork::held::keep(PROFILER.lock().unwrap_or_else(|e| e.into_inner()));
    crate::gc::fork::held::keep(KEPT.lock().unwrap_or_else(|e| e.into_inner()));
    sigprof::fork_prepare();
}

/// A forked child has no profile: the parent's is the parent's to write
/// (its reader thread and timers did not come along), and the child may
/// start its own.
fn fork_child() {
    sigprof::forget_in_child();
    if let Some(p) = PROFILER.lock().unwrap_or_else(|e| e.into_inner()).take() {
        // Its writer may hold the parent's buffered bytes: never flushed
        // here, and its reader thread does not exist.
        std::mem::forget(p);
    }
    // Label sets the parent kept stay allocated (never freed here).
    std::mem::forget(KEPT.lock().unwrap_or_else(|e| e.into_inner()).take());
}
