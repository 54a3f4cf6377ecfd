//! Heap profiles as Go makes them: allocations sampled at
//! `MemProfileRate` (one sample per 512 KiB allocated on average, by
//! default), written in pprof's protobuf format, which `go tool pprof`
//! reads.
//!
//! Sampling: each thread counts down the bytes to its next sample (in its
//! allocation-count block, `memory.rs`: one subtraction and compare on
//! the allocation path); the distance is drawn from an exponential
//! distribution of mean `rate`, as Go's `nextSample` does, so that every
//! byte has the same chance of being sampled. A sample records the
//! allocating stack (return addresses only: `gc::unwind::walk`) into a
//! table of sites, and the object's address in a table of entries that
//! every collection looks at when its marking ends (with the world
//! stopped, `marking_ended`): a sampled object left unmarked is dead, and
//! its entry is emptied for reuse; one freed explicitly is dead at once
//! (`forget`). The profile so needs nothing from the heap: weak pointers
//! did (each a cell of its own kind and a disappearing link in bdwgc's
//! heap), and those allocations made bdwgc grow the heap in GCBench (a
//! third more heap, 40% fewer collections). An object reachable only
//! from a finalizable one counts as dead from the collection that finds
//! it so (Go would count it in use until its finalizer has run).
//! Symbols
//! are resolved only when a profile is written; the collector's own frames
//! at the top of each stack are left out there.
//!
//! Values are scaled back to estimates of the whole heap as Go does
//! (`scaleHeapSample`: an object of size `s` sampled at rate `r` stands
//! for `1 / (1 - exp(-s/r))` objects), with the rate in force when each
//! sample was taken. Sample types: `alloc_objects`,
//! `alloc_space`, `inuse_objects`, `inuse_space` (count, bytes).
//!
//! Under `nogc` objects are never freed: everything sampled stays in use.

use std::collections::HashMap;
use std::io::Write;
use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::sync::Mutex;

/// Go's default `runtime.MemProfileRate`.
pub const DEFAULT_RATE: i64 = 512 * 1024;

static RATE: AtomicI64 = AtomicI64::new(DEFAULT_RATE);

/// Sets Go's `MemProfileRate` (bytes between samples on average; 0: no
/// sampling; 1: every allocation) and returns the previous one.
pub fn set_mem_profile_rate(bytes: i64) -> i64 {
    RATE.swap(bytes.max(0), Ordering::AcqRel)
}

/// The sampling rate in force.
pub fn mem_profile_rate() -> i64 {
    RATE.load(Ordering::Acquire)
}

/// One sampled allocation site: its stack and what it allocated.
#[derive(Default)]
struct Site {
    /// Objects and bytes allocated here, estimated from the samples.
    objects: f64,
    bytes: f64,
}

/// The sites (in the order first seen, `by_stack` naming each one's
/// index), and the sampled objects' entries by address (for [`forget`];
/// an entry found dead may still be listed: its address no longer
/// matches).
#[derive(Default)]
struct Samples {
    sites: Vec<Site>,
    by_stack: HashMap<Vec<usize>, u32>,
    by_addr: HashMap<usize, usize>,
    /// Entries below `LIVE_LEN` known to be empty, for reuse.
    free: Vec<usize>,
    /// `LIVE_LEN` at which empty entries are next looked for.
    next_scan: usize,
}

// ---- the sampled objects still alive ----------------------------------
//
// A collection looks at every sampled object when its marking ends, with
// the world stopped: one not marked is dead and its entry is emptied.
// That is why the entries live in chunks that never move, published with
// atomics: the collector may not take a lock a stopped thread holds.

/// One sampled object: its address (0: the entry is empty), its site, its
/// size and the objects it stands for (as `f64` bits). The address is
/// written last, with release ordering, after the rest.
#[derive(Default)]
struct Entry {
    addr: AtomicUsize,
    site: AtomicU32,
    size: AtomicUsize,
    n: AtomicU64,
}

const CHUNK: usize = 1024;
const CHUNKS: usize = 4096;

/// The chunks of entries (allocated as needed, never freed).
static CHUNK_TABLE: [AtomicPtr<Entry>; CHUNKS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
/// How many entries are in use or were (entries at and above it are
/// untouched).
static LIVE_LEN: AtomicUsize = AtomicUsize::new(0);

/// Entry `i` (below `LIVE_LEN`, whose chunk is published).
fn entry(i: usize) -> &'static Entry {
    let chunk = CHUNK_TABLE[i / CHUNK].load(Ordering::Acquire);
    // SAFETY: chunks below LIVE_LEN were published before it grew and are
    // never freed; `i % CHUNK` is inside the chunk.
    unsafe { &*chunk.add(i % CHUNK) }
}

impl Samples {
    /// An empty entry: a known free one, one found empty by a scan (once
    /// the table holds twice the entries the last scan found live), or a
    /// new one; `None` when the table is full of live samples.
    fn slot(&mut self) -> Option<usize> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        let len = LIVE_LEN.load(Ordering::Relaxed);
        if len >= self.next_scan {
            self.free = (0..len)
                .filter(|&i| entry(i).addr.load(Ordering::Acquire) == 0)
                .collect();
            // The table stays within twice the live entries: a scan that
            // found at least half of them empty is paid for by the reuses
            // it allows, one that found fewer by the entries added until
            // the next.
            self.next_scan = (2 * (len - self.free.len())).max(CHUNK);
            self.by_addr
                .retain(|&addr, &mut i| entry(i).addr.load(Ordering::Relaxed) == addr);
            if let Some(i) = self.free.pop() {
                return Some(i);
            }
        }
        if len == CHUNK * CHUNKS {
            return None;
        }
        if len.is_multiple_of(CHUNK) && CHUNK_TABLE[len / CHUNK].load(Ordering::Relaxed).is_null() {
            let size = CHUNK * std::mem::size_of::<Entry>();
            // SAFETY: plain C allocation; zeroed memory is CHUNK empty
            // entries (all fields atomics of zero).
            let chunk = unsafe { libc::calloc(1, size) }.cast::<Entry>();
            if chunk.is_null() {
                return None;
            }
            CHUNK_TABLE[len / CHUNK].store(chunk, Ordering::Release);
        }
        LIVE_LEN.store(len + 1, Ordering::Release);
        Some(len)
    }
}

/// At the end of a collection's marking, with the world stopped (called
/// by bdwgc's event hook): empties the entry of every sampled object
/// `is_marked` says is dead. No lock, no allocation.
#[cfg_attr(feature = "nogc", allow(dead_code))]
pub(super) fn marking_ended(is_marked: impl Fn(usize) -> bool) {
    let len = LIVE_LEN.load(Ordering::Acquire);
    for i in 0..len {
        let e = entry(i);
        let addr = e.addr.load(Ordering::Acquire);
        if addr != 0 && !is_marked(addr) {
            e.addr.store(0, Ordering::Release);
        }
    }
}

/// How many objects of `size` bytes one sample at `rate` stands for (Go's
/// `scaleHeapSample`).
fn scale(size: usize, rate: i64) -> f64 {
    if rate <= 1 {
        return 1.0;
    }
    1.0 / (1.0 - (-(size as f64) / rate as f64).exp())
}

static SITES: Mutex<Option<Samples>> = Mutex::new(None);

/// Whether anything was ever sampled (frees skip the table before).
static ANY: AtomicBool = AtomicBool::new(false);

/// Before a fork (see `gc::TABLES_FORK`).
pub(super) fn lock_for_fork() {
    super::fork::held::keep(SITES.lock().unwrap_or_else(|e| e.into_inner()));
}

/// The allocation path's slow branch: the countdown crossed zero.
#[cold]
#[inline(never)]
pub(crate) fn sampled(p: Option<NonNull<u8>>, size: usize) {
    thread_local! {
        /// Set while this thread records a sample: its own allocations
        /// (through a global allocator of ours) are not sampled.
        static RECORDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    let rate = mem_profile_rate();
    super::memory::next_sample(|random| draw(rate, random));
    let Some(p) = p else { return };
    if rate == 0 || crate::fresh::with(&RECORDING, |r| r.replace(true)) {
        return;
    }
    record(p, size);
    crate::fresh::with(&RECORDING, |r| r.set(false));
}

fn record(p: NonNull<u8>, size: usize) {
    let mut stack = Vec::with_capacity(32);
    super::unwind::walk(|pc| {
        stack.push(pc);
        stack.len() < 64
    });
    let n = scale(size, mem_profile_rate());
    let mut guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let samples = guard.get_or_insert_with(Samples::default);
    let next = samples.sites.len() as u32;
    let site = *samples.by_stack.entry(stack).or_insert(next);
    if site == next {
        samples.sites.push(Site::default());
    }
    let totals = &mut samples.sites[site as usize];
    totals.objects += n;
    totals.bytes += n * size as f64;
    // With every entry holding a live sample, this one counts in the
    // totals only.
    let Some(i) = samples.slot() else { return };
    let e = entry(i);
    e.site.store(site, Ordering::Relaxed);
    e.size.store(size, Ordering::Relaxed);
    e.n.store(n.to_bits(), Ordering::Relaxed);
    let addr = p.as_ptr() as usize;
    e.addr.store(addr, Ordering::Release);
    samples.by_addr.insert(addr, i);
    ANY.store(true, Ordering::Release);
}

/// The object at `obj` is about to be freed explicitly: its sample, if it
/// has one, is dead now (no collection may look at its address again).
pub(crate) fn forget(obj: *mut u8) {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    let mut guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let Some(samples) = guard.as_mut() else {
        return;
    };
    let addr = obj as usize;
    if let Some(i) = samples.by_addr.remove(&addr) {
        // Only if the entry still names this object: a dead sample's
        // entry may hold a newer one by now.
        let _ = entry(i)
            .addr
            .compare_exchange(addr, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// The next sampling distance for `rate`: exponential with that mean.
fn draw(rate: i64, random: u64) -> i64 {
    match rate {
        0 => i64::MAX,
        1 => 0,
        r => {
            // A uniform (0, 1] from 53 random bits.
            let u = ((random >> 11) + 1) as f64 / (1u64 << 53) as f64;
            (-u.ln() * r as f64).min(i64::MAX as f64 / 2.0) as i64
        }
    }
}

// ---- pprof's profile.proto, the messages a heap profile needs ---------

#[derive(Clone, PartialEq, prost::Message)]
struct Profile {
    #[prost(message, repeated, tag = "1")]
    sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    time_nanos: i64,
    #[prost(message, optional, tag = "11")]
    period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    period: i64,
    #[prost(int64, tag = "14")]
    default_sample_type: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ValueType {
    #[prost(int64, tag = "1")]
    r#type: i64,
    #[prost(int64, tag = "2")]
    unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    value: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Mapping {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(uint64, tag = "2")]
    memory_start: u64,
    #[prost(uint64, tag = "3")]
    memory_limit: u64,
    #[prost(uint64, tag = "4")]
    file_offset: u64,
    #[prost(int64, tag = "5")]
    filename: i64,
    #[prost(int64, tag = "6")]
    build_id: i64,
    #[prost(bool, tag = "7")]
    has_functions: bool,
    #[prost(bool, tag = "8")]
    has_filenames: bool,
    #[prost(bool, tag = "9")]
    has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    has_inline_frames: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Location {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(uint64, tag = "2")]
    mapping_id: u64,
    #[prost(uint64, tag = "3")]
    address: u64,
    #[prost(message, repeated, tag = "4")]
    line: Vec<Line>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Line {
    #[prost(uint64, tag = "1")]
    function_id: u64,
    #[prost(int64, tag = "2")]
    line: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Function {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "2")]
    name: i64,
    #[prost(int64, tag = "3")]
    system_name: i64,
    #[prost(int64, tag = "4")]
    filename: i64,
}

/// Builds the profile's tables: strings, functions, locations.
#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    functions: Vec<Function>,
    function_ids: HashMap<(String, String), u64>,
    locations: Vec<Location>,
    /// The loaded objects, and their mappings (ids from 1, in order).
    objects: Vec<super::objects::Object>,
    mappings: Vec<Mapping>,
    /// By return address and the inlined frames left out of it.
    location_ids: HashMap<(usize, usize), u64>,
}

impl Builder {
    /// A builder whose mappings are the loaded objects.
    fn new() -> Builder {
        let mut b = Builder {
            objects: super::objects::loaded(),
            ..Builder::default()
        };
        let objects = b.objects.clone();
        b.mappings = objects
            .iter()
            .enumerate()
            .map(|(i, o)| Mapping {
                id: i as u64 + 1,
                memory_start: o.start,
                memory_limit: o.limit,
                file_offset: o.file_offset,
                filename: b.string(&o.path),
                build_id: b.string(&o.build_id),
                has_functions: true,
                has_filenames: true,
                has_line_numbers: true,
                has_inline_frames: true,
            })
            .collect();
        b
    }

    fn string(&mut self, s: &str) -> i64 {
        if self.strings.is_empty() {
            // Index 0 is the empty string, as pprof requires.
            self.strings.push(String::new());
            self.string_ids.insert(String::new(), 0);
        }
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), id);
        id
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let key = (name.to_string(), file.to_string());
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.functions.len() as u64 + 1;
        let f = Function {
            id,
            name: self.string(&display_name(name)),
            system_name: self.string(name),
            filename: self.string(file),
        };
        self.functions.push(f);
        self.function_ids.insert(key, id);
        id
    }

    /// The location of the return address `pc`, with its functions and
    /// lines (inlined ones too, innermost first), less the `skip`
    /// innermost.
    fn location(&mut self, pc: usize, skip: usize) -> u64 {
        if let Some(&id) = self.location_ids.get(&(pc, skip)) {
            return id;
        }
        let mut frames = symbols(pc);
        if frames.is_empty() {
            frames.push(("?".into(), String::new(), 0));
        }
        let line = frames
            .iter()
            .skip(skip.min(frames.len() - 1))
            .map(|(name, file, line)| Line {
                function_id: self.function(name, file),
                line: *line,
            })
            .collect();
        let id = self.locations.len() as u64 + 1;
        let mapping_id = self
            .objects
            .iter()
            .position(|o| (o.start..o.limit).contains(&(pc as u64)))
            .map_or(0, |i| i as u64 + 1);
        self.locations.push(Location {
            id,
            mapping_id,
            address: pc as u64,
            line,
        });
        self.location_ids.insert((pc, skip), id);
        id
    }
}

/// A Rust function's demangled name as a profile shows it: the type for
/// a trait method (`<Vec<T> as FromIterator<T>>::from_iter` is
/// `alloc::vec::Vec::from_iter`), without generic arguments. pprof cuts
/// what is between angle brackets as C++ template arguments, which left
/// `::from_iter` of the full name; the full name stays the function's
/// system name.
fn display_name(full: &str) -> String {
    /// The index of the `>` that closes the `<` at `open`.
    fn closing(s: &[u8], open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, &c) in s.iter().enumerate().skip(open) {
            match c {
                b'<' => depth += 1,
                b'>' if i > 0 && s[i - 1] == b'-' => {}
                b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
    let b = full.as_bytes();
    let mut out = String::with_capacity(full.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'<' {
            let Some(end) = closing(b, i) else {
                out.push_str(&full[i..]);
                break;
            };
            let inner = &full[i + 1..end];
            let after_ident = out
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !after_ident {
                // A qualified path `<T as Trait>`: keep the type.
                let mut depth = 0i32;
                let mut cut = inner.len();
                for (k, c) in inner.char_indices() {
                    match c {
                        '<' => depth += 1,
                        '>' => depth -= 1,
                        ' ' if depth == 0 && inner[k..].starts_with(" as ") => {
                            cut = k;
                            break;
                        }
                        _ => {}
                    }
                }
                out.push_str(&display_name(&inner[..cut]));
            }
            // Generic arguments after a name are dropped.
            i = end + 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Whether `f` is the runtime's own (left out at the top of a sampled
/// stack, so that a sample names the code that allocated, as Go's name
/// the user's function): the collector, the sampler, the other layers an
/// allocation passes through (a C entry point, its panic guard), and the
/// C ABI's entry symbols.
fn is_allocator_function(f: &str) -> bool {
    const RUNTIME: [&str; 12] = [
        "defergc::gc::",
        "defergc::ffi::",
        "defergc::defer::",
        "defergc::go::",
        "defergc::precise::",
        "defergc::roots::",
        "defergc::tls::",
        "defergc::fresh::",
        "defergc::context::",
        "backtrace::",
        "std::panicking::",
        "std::panic::catch_unwind",
    ];
    let f = f.strip_prefix('<').unwrap_or(f);
    RUNTIME.iter().any(|p| f.starts_with(p))
        || f.starts_with("core::panic::unwind_safe::AssertUnwindSafe")
        || f.starts_with("defergc_")
}

/// A frame of a sampled stack: function, file and line.
type Frame = (String, String, i64);

/// The frames of the call before the return address `pc`, innermost
/// first: the function the address is in, after the functions inlined
/// into it at that call (from the program's debug information, or its
/// symbol table alone).
fn symbols(pc: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    // (resolve looks up the byte before a return address itself.)
    super::unwind::resolve(pc, |sym| {
        frames.push((
            sym.name()
                .map(|n| format!("{n:#}"))
                .unwrap_or_else(|| "?".into()),
            sym.filename()
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            i64::from(sym.lineno().unwrap_or(0)),
        ));
    });
    frames
}

/// Where a sample's stack starts once the collector's own frames are
/// left out: the first return address with a frame that is not the
/// collector's, and how many (inlined) frames of it to leave out. In an
/// optimised build the allocation is inlined into its caller, so one
/// return address holds both the collector's frames and the caller's.
fn user_start(stack: &[usize]) -> (usize, usize) {
    for (i, &pc) in stack.iter().enumerate() {
        let frames = symbols(pc);
        if frames.is_empty() {
            return (i, 0);
        }
        if let Some(skip) = frames
            .iter()
            .position(|(f, _, _)| !is_allocator_function(f))
        {
            return (i, skip);
        }
    }
    (stack.len(), 0)
}

/// Go's `pprof.WriteHeapProfile`: the samples so far, in pprof's protobuf
/// format (uncompressed, which pprof reads as well as gzip).
pub fn write_heap_profile(mut out: impl Write) -> std::io::Result<()> {
    let rate = mem_profile_rate().max(1);
    let sites: Vec<(Vec<usize>, [f64; 4])> = {
        let guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
        let mut values: Vec<[f64; 4]> = guard
            .iter()
            .flat_map(|s| s.sites.iter())
            .map(|site| [site.objects, site.bytes, 0.0, 0.0])
            .collect();
        for i in 0..LIVE_LEN.load(Ordering::Acquire) {
            let e = entry(i);
            if e.addr.load(Ordering::Acquire) == 0 {
                continue;
            }
            let n = f64::from_bits(e.n.load(Ordering::Relaxed));
            let v = &mut values[e.site.load(Ordering::Relaxed) as usize];
            v[2] += n;
            v[3] += n * e.size.load(Ordering::Relaxed) as f64;
        }
        let mut stacks: Vec<(Vec<usize>, [f64; 4])> = guard
            .iter()
            .flat_map(|s| s.by_stack.iter())
            .map(|(stack, &i)| (stack.clone(), values[i as usize]))
            .collect();
        stacks.sort_by_key(|(_, v)| std::cmp::Reverse(v[1] as u64));
        stacks
    };
    let mut b = Builder::new();
    let sample_type = [
        "alloc_objects",
        "alloc_space",
        "inuse_objects",
        "inuse_space",
    ]
    .iter()
    .zip(["count", "bytes", "count", "bytes"])
    .map(|(t, u)| ValueType {
        r#type: b.string(t),
        unit: b.string(u),
    })
    .collect();
    let mut samples = Vec::new();
    for (stack, values) in sites {
        let (start, skip) = user_start(&stack);
        // (The unwinder ends some stacks with a zero address.)
        let location_id = stack[start..]
            .iter()
            .enumerate()
            .filter(|&(_, &pc)| pc != 0)
            .map(|(i, &pc)| b.location(pc, if i == 0 { skip } else { 0 }))
            .collect();
        samples.push(Sample {
            location_id,
            value: values.iter().map(|v| v.round() as i64).collect(),
        });
    }
    let period_type = Some(ValueType {
        r#type: b.string("space"),
        unit: b.string("bytes"),
    });
    let default_sample_type = b.string("inuse_space");
    let profile = Profile {
        sample_type,
        sample: samples,
        mapping: b.mappings,
        location: b.locations,
        function: b.functions,
        string_table: b.strings,
        time_nanos: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64),
        period_type,
        period: rate,
        default_sample_type,
    };
    out.write_all(&prost::Message::encode_to_vec(&profile))
}

/// Writes the heap profile to `path` (C: `defergc_write_heap_profile`).
pub fn write_heap_profile_to(path: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = std::io::BufWriter::new(file);
    write_heap_profile(&mut out)?;
    out.flush()
}

/// How many sample entries the table has used (live, or empty and
/// waiting for reuse), for tests: it follows the sampled objects in use,
/// not all ever sampled.
#[doc(hidden)]
pub fn entries_for_tests() -> usize {
    LIVE_LEN.load(Ordering::Acquire)
}

/// Decodes a profile written by [`write_heap_profile`] into its sites:
/// each site's function names (innermost first) and values, for tests.
pub fn decode_for_tests(bytes: &[u8]) -> Option<Vec<(Vec<String>, Vec<i64>)>> {
    let p: Profile = prost::Message::decode(bytes).ok()?;
    let name = |function_id: u64| -> String {
        p.function
            .iter()
            .find(|f| f.id == function_id)
            .and_then(|f| p.string_table.get(f.name as usize).cloned())
            .unwrap_or_default()
    };
    Some(
        p.sample
            .iter()
            .map(|s| {
                let names = s
                    .location_id
                    .iter()
                    .filter_map(|id| p.location.iter().find(|l| l.id == *id))
                    .flat_map(|l| l.line.iter().map(|line| name(line.function_id)))
                    .collect();
                (names, s.value.clone())
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trait_methods_are_named_by_their_type_without_generic_arguments() {
        for (full, shown) in [
            (
                "<alloc::vec::Vec<T> as core::iter::traits::collect::FromIterator<T>>::from_iter",
                "alloc::vec::Vec::from_iter",
            ),
            (
                "<core::panic::unwind_safe::AssertUnwindSafe<F> as core::ops::function::FnOnce<()>>::call_once",
                "core::panic::unwind_safe::AssertUnwindSafe::call_once",
            ),
            (
                "<core::result::Result<V,E> as core::iter::traits::collect::FromIterator<core::result::Result<A,E>>>::from_iter::{{closure}}",
                "core::result::Result::from_iter::{{closure}}",
            ),
            (
                "defergc::cli::stress::run::{{closure}}",
                "defergc::cli::stress::run::{{closure}}",
            ),
            (
                "<&dyn core::ops::function::Fn<(), Output = i32> as core::ops::function::FnOnce<()>>::call_once",
                "&dyn core::ops::function::Fn::call_once",
            ),
            (
                "core::ptr::drop_in_place<alloc::string::String>",
                "core::ptr::drop_in_place",
            ),
        ] {
            assert_eq!(display_name(full), shown, "{full}");
        }
    }
}
