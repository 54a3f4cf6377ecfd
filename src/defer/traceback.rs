//! The goroutine section of Go's report: `goroutine N [running]:` and the
//! frames, each `function(...)` then `\tfile:line +0xoffset`, as Go
//! prints them; and `runtime.Callers`/`runtime.Caller`/`runtime.Stack`
//! for compiled code.
//!
//! A report is printed after the panic has unwound (or jumped) out of the
//! frames it passed, so what it lists is recorded when the panic starts,
//! at no cost beyond a walk of the frame chain: the site of the panic (the
//! caller of `defergc_panic`, or the faulting instruction), then every
//! frame with deferred calls, innermost first (a compiled function's frame
//! records where it was entered; a Rust frame the `#[track_caller]`
//! location of `defer::call`). Frames between those that defer nothing
//! are not listed by default; `GOTRACEBACK=system` (or `crash`) records
//! the whole stack at every panic instead, at the cost of an unwind. The
//! frames above the outermost frame (`main` and its callers) are read
//! from the live stack when the report is printed. Symbols, files and
//! lines come from the `backtrace` crate (debug info when present, the
//! symbol table otherwise); the runtime's own frames are left out.
//!
//! `GOTRACEBACK=none` prints no goroutine section, `single` (the
//! default) the panicking goroutine's, `all` every goroutine's section
//! too (the go layer's `dump.rs`: header, frames, `created by`); `crash`
//! ends with SIGABRT instead of status 2.

use smallvec::SmallVec;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::panic::Location;
use std::sync::OnceLock;

/// Where a frame (or the panic) is: an instruction address of compiled
/// code (a return address), or a Rust source location.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin {
    /// Not known.
    None,
    /// A return address (the instruction after a call).
    Return(usize),
    /// The address of the instruction itself (a fault).
    Exact(usize),
    /// A Rust frame's `#[track_caller]` location.
    Source(&'static Location<'static>),
}

/// What a panic's report will list (see the module docs).
#[derive(Default)]
pub(crate) struct Trace {
    entries: SmallVec<[Origin; 8]>,
    /// Whether the first entry is the panic's site (not a frame).
    site_first: bool,
    /// Whether the entries are the whole stack (nothing is appended from
    /// the live stack when the report is printed).
    whole: bool,
}

/// `GOTRACEBACK`'s levels.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Level {
    /// No goroutine section.
    None,
    /// The panicking goroutine's (the default).
    Single,
    /// Every goroutine's.
    All,
    /// Every goroutine's, with the whole stack recorded at each panic.
    System,
    /// As `System`, then SIGABRT (a core dump where enabled).
    Crash,
}

/// The level `GOTRACEBACK` sets (read once).
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var("GOTRACEBACK").as_deref() {
        Ok("none" | "0") => Level::None,
        Ok("all" | "2") => Level::All,
        Ok("system") => Level::System,
        Ok("crash") => Level::Crash,
        _ => Level::Single,
    })
}

impl Trace {
    /// What a panic starting at `site` will report, in a context whose
    /// frames started at `frames` (innermost first).
    pub(crate) fn capture(site: Origin, frames: impl Iterator<Item = Origin>) -> Trace {
        let mut trace = Trace::default();
        trace.capture_into(site, frames);
        trace
    }

    /// [`capture`](Self::capture) into this trace, replacing what it held:
    /// a reused panic record refills its trace where it lies, rather than
    /// moving a fresh one in.
    pub(crate) fn capture_into(&mut self, site: Origin, frames: impl Iterator<Item = Origin>) {
        let entries = &mut self.entries;
        entries.clear();
        let raised_by_runtime = matches!(site, Origin::Source(loc) if is_runtime_location(loc));
        if level() >= Level::System || raised_by_runtime {
            // The whole stack, now. A panic the runtime raised (a channel
            // closed twice, a negative WaitGroup counter) is reported, as
            // Go reports it, at the code that called the runtime: the
            // runtime's own frames are left out when it is printed, so
            // the first frame listed is that caller.
            crate::unwind::walk(|pc| {
                entries.push(Origin::Return(pc));
                entries.len() < 100
            });
            self.site_first = false;
            self.whole = true;
            return;
        }
        self.site_first = !matches!(site, Origin::None);
        if self.site_first {
            entries.push(site);
        }
        entries.extend(frames);
        self.whole = false;
    }

    /// The frames section: one `function(...)\n\tfile:line +0xoff\n` per
    /// frame the report lists, runtime frames left out; the live stack
    /// above the recorded frames is appended when `live` (the report is
    /// printed on the panicking stack).
    pub(crate) fn format(&self, live: bool) -> String {
        let mut out = String::new();
        let mut last_function = String::new();
        for (i, &o) in self.entries.iter().enumerate() {
            if let Some(f) = describe(o) {
                // The panic's site and its own function's frame are one
                // activation: listed once, at the site.
                if i > 0 && f.function == last_function && self.site_first {
                    continue;
                }
                if is_process_start(&f.function) {
                    break;
                }
                if !is_runtime(&f.function) {
                    push_frame(&mut out, &f);
                    last_function = f.function;
                }
            }
        }
        if live && !self.whole {
            // Above the outermost recorded frame: what called it.
            let mut frames = Vec::new();
            crate::unwind::walk(|pc| {
                frames.push(pc);
                frames.len() < 100
            });
            let mut seen_last = last_function.is_empty();
            for pc in frames {
                let Some(f) = describe(Origin::Return(pc)) else {
                    continue;
                };
                if is_runtime(&f.function) || is_process_start(&f.function) {
                    continue;
                }
                if !seen_last {
                    // Skip up to the outermost recorded frame's function.
                    if f.function == last_function {
                        seen_last = true;
                    }
                    continue;
                }
                push_frame(&mut out, &f);
            }
        }
        out
    }
}

/// Whether `loc` is in the runtime's own source (this crate's files): a
/// panic raised there is the runtime's, on behalf of its caller.
fn is_runtime_location(loc: &Location<'_>) -> bool {
    // This file's path, less its path inside the crate, is where the
    // crate's sources are, as the compiler names them (relative in this
    // workspace, absolute when built as a dependency).
    const HERE: &str = file!();
    let root = HERE.strip_suffix("defer/traceback.rs").unwrap_or("src/");
    loc.file().starts_with(root)
}

/// A symbolised frame.
struct Described {
    function: String,
    file: Option<String>,
    line: Option<u32>,
    offset: Option<usize>,
}

fn push_frame(out: &mut String, f: &Described) {
    let _ = writeln!(out, "{}(...)", f.function);
    match (&f.file, f.line) {
        (Some(file), Some(line)) => {
            let _ = write!(out, "\t{file}:{line}");
        }
        _ => out.push_str("\t?"),
    }
    // Go gives no offset for a pc at the function's first instruction (a
    // fault there).
    if let Some(off) = f.offset.filter(|&off| off > 0) {
        let _ = write!(out, " +{off:#x}");
    }
    out.push('\n');
}

fn describe(o: Origin) -> Option<Described> {
    let (addr, lookup) = match o {
        Origin::None => return None,
        Origin::Source(loc) => {
            return Some(Described {
                function: String::from("defer::call"),
                file: Some(loc.file().to_string()),
                line: Some(loc.line()),
                offset: None,
            })
        }
        // A return address belongs to the call before it.
        Origin::Return(pc) => (pc, pc.saturating_sub(1)),
        Origin::Exact(pc) => (pc, pc),
    };
    let mut found: Option<Described> = None;
    // (resolve looks up the byte before the address it is given, as for a
    // return address.)
    crate::unwind::resolve(lookup + 1, |sym| {
        if found.is_some() {
            // The outermost of inlined frames comes last: keep the first
            // (innermost) name, as Go lists inlined calls separately.
            return;
        }
        let function = sym
            .name()
            .map(|n| format!("{n:#}"))
            .unwrap_or_else(|| String::from("?"));
        found = Some(Described {
            function,
            file: sym.filename().map(|p| p.display().to_string()),
            line: sym.lineno(),
            offset: offset_in(addr, lookup),
        });
    });
    found
}

extern "C" {
    /// libgcc's: the start of the function whose unwind information
    /// covers `pc` (null when none does).
    fn _Unwind_FindEnclosingFunction(pc: *mut c_void) -> *mut c_void;
}

/// The offset of `addr` from the start of its function (by the unwind
/// information, which every function that can be unwound has).
fn offset_in(addr: usize, lookup: usize) -> Option<usize> {
    // SAFETY: a lookup in the unwind tables; any address is accepted.
    let start = unsafe { _Unwind_FindEnclosingFunction(lookup as *mut c_void) } as usize;
    (start != 0 && start <= addr).then(|| addr - start)
}

/// The runtime's own frames (and the Rust standard library's under it),
/// which a report leaves out. The C ABI's entry points are `defergc_`
/// symbols; the `defergc` command's own code (`defergc::cli::`, its
/// workloads) is not the runtime.
fn is_runtime(function: &str) -> bool {
    if function.starts_with("defergc::cli::") {
        return false;
    }
    const PREFIXES: &[&str] = &[
        "defergc::",
        "<defergc::",
        "std::",
        "<std::",
        "core::",
        "<core::",
        "alloc::",
        "<alloc::",
        "corosensei::",
        "<corosensei::",
        "backtrace::",
        "__rust",
        "rust_",
        "_Unwind",
        "stack_init_trampoline",
        "?",
    ];
    PREFIXES.iter().any(|p| function.starts_with(p))
        || (function.starts_with("defergc_") && !function.contains("::"))
}

/// Whether the instruction at `pc` is the runtime's own: defergc's code
/// (its Rust functions and C entry points), bdwgc's, or the coroutine
/// switch's; by the symbol that covers it (and the source file, for
/// bdwgc's static functions, when debug information says).
pub(crate) fn is_runtime_code(pc: usize) -> bool {
    const PREFIXES: &[&str] = &[
        "defergc::",
        "<defergc::",
        "defergc_",
        "GC_",
        "corosensei::",
        "<corosensei::",
    ];
    /// The Rust standard library's code, inlined into its caller: the
    /// caller decides.
    const LIBRARY: &[&str] = &[
        "core::", "<core::", "std::", "<std::", "alloc::", "<alloc::",
    ];
    let mut decided: Option<bool> = None;
    // (resolve looks up the byte before the address it is given.)
    crate::unwind::resolve(pc + 1, |sym| {
        // Inlined frames come innermost first: the first that is not the
        // standard library's is the code that faulted.
        if decided.is_some() {
            return;
        }
        let name = sym.name().map(|n| format!("{n:#}")).unwrap_or_default();
        if LIBRARY.iter().any(|p| name.starts_with(p)) {
            return;
        }
        let in_bdwgc = sym
            .filename()
            .is_some_and(|f| f.to_string_lossy().contains("/bdwgc/"));
        decided = Some(in_bdwgc || PREFIXES.iter().any(|p| name.starts_with(p)));
    });
    decided.unwrap_or(false)
}

/// Frames below `main`: the C library's start and thread entry, and a
/// goroutine's coroutine entry.
fn is_process_start(function: &str) -> bool {
    matches!(
        function,
        "__libc_start_main"
            | "__libc_start_call_main"
            | "_start"
            | "start_thread"
            | "clone"
            | "clone3"
            // A goroutine's first frame, below its coroutine's entry.
            | "stack_init_trampoline"
    ) || function.starts_with("__libc_start")
}

/// How a dump lists one return address of a parked goroutine's stack.
pub(crate) enum FrameText {
    /// As a report prints it: `function(...)` and `\tfile:line +0xoff`.
    Shown(String),
    /// The runtime's own frame, or one with no symbol: left out.
    Hidden,
    /// Below the goroutine's first function (the process's start): the
    /// walk ends.
    End,
}

/// What a dump prints for return address `pc` (see [`FrameText`]): each
/// function inlined there, innermost first, as Go lists inlined calls
/// (the offset on the outermost only: the others have no entry of their
/// own), the runtime's left out unless `system` (Go's level 2).
pub(crate) fn frame_text(pc: usize, system: bool) -> FrameText {
    let mut frames: SmallVec<[Described; 4]> = SmallVec::new();
    // (resolve looks up the byte before the address it is given.)
    crate::unwind::resolve(pc, |sym| {
        frames.push(Described {
            function: sym
                .name()
                .map(|n| format!("{n:#}"))
                .unwrap_or_else(|| String::from("?")),
            file: sym.filename().map(|p| p.display().to_string()),
            line: sym.lineno(),
            offset: None,
        });
    });
    if let Some(outermost) = frames.last_mut() {
        outermost.offset = offset_in(pc, pc.saturating_sub(1));
    }
    if frames.iter().any(|f| is_process_start(&f.function)) {
        return FrameText::End;
    }
    let mut out = String::new();
    for f in frames.iter().filter(|f| system || !is_runtime(&f.function)) {
        push_frame(&mut out, f);
    }
    if out.is_empty() {
        FrameText::Hidden
    } else {
        FrameText::Shown(out)
    }
}

/// Go's `created by F in goroutine N` (no `in goroutine` for 0: not
/// started by a goroutine) and the `\tfile:line +0xoff` of the go
/// statement, for the return address `pc` into the function that ran
/// it; `None` when nothing is known of `pc`.
pub(crate) fn created_by(pc: usize, creator: u64) -> Option<String> {
    let f = describe(Origin::Return(pc))?;
    let mut frame = String::new();
    push_frame(&mut frame, &f);
    // The frame's second line is the go statement's place.
    let place = frame.split_once('\n').map_or("", |(_, rest)| rest);
    let by = if creator == 0 {
        String::new()
    } else {
        format!(" in goroutine {creator}")
    };
    Some(format!("created by {}{by}\n{place}", f.function))
}

/// What `GOTRACEBACK=all` adds: the other goroutines' sections, from the
/// layer that runs them (set once, by the go layer).
/// Its second argument: whether to stop the world while reading them.
static OTHERS: OnceLock<fn(u64, bool) -> String> = OnceLock::new();

/// Registers the provider of the other goroutines' section.
pub(crate) fn set_others(f: fn(u64, bool) -> String) {
    let _ = OTHERS.set(f);
}

/// The goroutine section of a report for context `id` (empty at
/// `GOTRACEBACK=none`): a blank line, the header, the frames, and at
/// `all` and above the other goroutines.
pub(crate) fn section(trace: Option<&Trace>, id: u64, live: bool) -> String {
    if level() == Level::None {
        return String::new();
    }
    let mut out = format!("\ngoroutine {id} [running]:\n");
    if let Some(t) = trace {
        out.push_str(&t.format(live));
    }
    if level() >= Level::All {
        if let Some(f) = OTHERS.get() {
            out.push_str(&f(id, false));
        }
    }
    out
}

// ---- runtime.Callers, runtime.Caller, runtime.Stack ----------------------

/// What Go's `runtime.CallersFrames` (or `runtime.FuncForPC`) says about a
/// program counter: the function, its file and line, and where the
/// function starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// The function's name (demangled for Rust; as written for C).
    pub function: String,
    /// The source file, when debug information says.
    pub file: Option<String>,
    /// The line, when debug information says.
    pub line: Option<u32>,
    /// The address of the function's first instruction, when known.
    pub entry: Option<usize>,
}

/// The return addresses of the calling thread's frames, innermost first:
/// Go's `runtime.Callers`, where `skip` 0 is the caller of `callers`.
/// Walks the stack with the unwinder (compiled code needs unwind tables,
/// the default on x86-64 Linux); at most `max` addresses.
#[inline(never)]
pub fn callers(skip: usize, max: usize) -> Vec<usize> {
    let me = callers as fn(usize, usize) -> Vec<usize> as usize;
    stack_from(me, None, skip, max)
}

/// The return addresses above the frame of the function that starts at
/// `below` (or, if `caller` is given, from the frame that returns to it),
/// skipping `skip` of them.
pub(crate) fn stack_from(
    below: usize,
    caller: Option<usize>,
    skip: usize,
    max: usize,
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut found = false;
    let mut skipped = 0;
    crate::unwind::walk_frames(|f| {
        let ip = f.ip() as usize;
        if !found {
            found = match caller {
                Some(pc) => ip == pc,
                None => f.symbol_address() as usize == below,
            };
            // The caller's own return address is the first one listed.
            if !(found && caller.is_some()) {
                return true;
            }
        }
        if skipped < skip {
            skipped += 1;
            return true;
        }
        out.push(ip);
        out.len() < max
    });
    out
}

/// What is known about the return address `pc` (Go's CallersFrames reads
/// the call instruction before it).
pub fn frame_info(pc: usize) -> Option<FrameInfo> {
    let d = describe(Origin::Return(pc))?;
    Some(FrameInfo {
        entry: d.offset.map(|off| pc - off),
        function: d.function,
        file: d.file,
        line: d.line,
    })
}

/// Go's `runtime.Stack`: `goroutine N [running]:` and the calling
/// thread's frames as a report lists them (the runtime's own left out),
/// and with `all` the other goroutines' sections.
pub fn stack(all: bool) -> String {
    let id = crate::context::current().id();
    let mut out = format!("goroutine {id} [running]:\n");
    let mut frames = Vec::new();
    crate::unwind::walk(|pc| {
        frames.push(pc);
        frames.len() < 100
    });
    for pc in frames {
        let Some(f) = describe(Origin::Return(pc)) else {
            continue;
        };
        if is_process_start(&f.function) {
            break;
        }
        if !is_runtime(&f.function) {
            push_frame(&mut out, &f);
        }
    }
    if all {
        if let Some(f) = OTHERS.get() {
            out.push_str(&f(id, true));
        }
    }
    out
}
