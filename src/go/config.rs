//! The scheduler's configuration (Go's `GOMAXPROCS`, the goroutine stack
//! size), from [`init_with`] or the environment, and the start of the
//! scheduler with it on first use ([`scheduler`]).

use super::dump;
use super::{deadlock, fault, fork, procs, sched};

/// Settings of the scheduler, applied by [`init_with`] (or defaults when
/// the first goroutine starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Processors: goroutines running at once (Go's `GOMAXPROCS`). `None`:
    /// the `GOMAXPROCS` environment variable, else the available cores.
    pub max_procs: Option<usize>,
    /// Bytes of stack per goroutine (address space; only touched pages
    /// cost memory). `None`: `DEFERGC_STACK_SIZE` (bytes, or with a `KiB`
    /// / `MiB` suffix), else [`DEFAULT_STACK_SIZE`].
    pub stack_size: Option<usize>,
}

/// The default stack of a goroutine: 256 KiB of address space.
pub const DEFAULT_STACK_SIZE: usize = 256 << 10;
/// The smallest stack a goroutine can have.
pub const MIN_STACK_SIZE: usize = 16 << 10;
/// The largest stack a goroutine can have.
pub const MAX_STACK_SIZE: usize = 1 << 30;

impl Config {
    /// Everything from the environment or the defaults.
    pub const DEFAULT: Config = Config {
        max_procs: None,
        stack_size: None,
    };
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

/// Why [`init_with`] refused a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The scheduler already runs (its first goroutine started).
    AlreadyStarted,
    /// A setting is out of range: the message says which and why.
    Invalid(String),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::AlreadyStarted => f.write_str(
                "defergc: the goroutine scheduler already runs; configure it before the first goroutine",
            ),
            ConfigError::Invalid(why) => write!(f, "defergc: {why}"),
        }
    }
}

impl std::error::Error for ConfigError {}

static CONFIG: std::sync::Mutex<Option<Config>> = std::sync::Mutex::new(None);

/// Configures the scheduler before its first goroutine starts.
pub fn init_with(config: Config) -> Result<(), ConfigError> {
    if procs::get().is_some() {
        return Err(ConfigError::AlreadyStarted);
    }
    settings_of(&config)?;
    *CONFIG.lock().unwrap_or_else(|e| e.into_inner()) = Some(config);
    Ok(())
}

/// The settings `config` gives, checked.
fn settings_of(config: &Config) -> Result<procs::Settings, ConfigError> {
    let procs = match config.max_procs {
        Some(n) => n,
        None => match std::env::var("GOMAXPROCS") {
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                // Go ignores a GOMAXPROCS it cannot use.
                _ => default_procs(),
            },
            Err(_) => default_procs(),
        },
    };
    if procs == 0 || procs > 1024 {
        return Err(ConfigError::Invalid(format!(
            "GOMAXPROCS {procs} is out of range (1 to 1024)"
        )));
    }
    let stack_size = match config.stack_size {
        Some(n) => n,
        None => match std::env::var("DEFERGC_STACK_SIZE") {
            Ok(v) => parse_size(&v).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "DEFERGC_STACK_SIZE={v:?} is not a size (bytes, or with KiB or MiB)"
                ))
            })?,
            Err(_) => DEFAULT_STACK_SIZE,
        },
    };
    if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&stack_size) {
        return Err(ConfigError::Invalid(format!(
            "a goroutine stack of {stack_size} bytes is out of range ({MIN_STACK_SIZE} to {MAX_STACK_SIZE})"
        )));
    }
    Ok(procs::Settings { procs, stack_size })
}

fn default_procs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Parses `123`, `64KiB`, `8MiB` (bytes).
fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (digits, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, ""),
    };
    let n: usize = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// The scheduler, started on first use.
pub(crate) fn scheduler() -> &'static procs::Sched {
    sched::start(
        || {
            let config = CONFIG
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_default();
            let settings = settings_of(&config).unwrap_or_else(|e| crate::abort(&e.to_string()));
            fault::install(settings.stack_size);
            install_panic_hook();
            crate::defer::traceback::set_others(dump::other_goroutines);
            dump::install_sigquit();
            settings
        },
        fork::install,
        deadlock::check,
    )
}

/// Goroutines report their own unrecovered panics (Go's text), and Go
/// prints nothing when a panic starts or is recovered: the Rust panic
/// message is kept for threads that are not running a goroutine.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if procs::current_g().is_none() {
            previous(info);
        }
    }));
}

/// The number of processors (Go's `runtime.GOMAXPROCS(0)`); starts the
/// scheduler if needed. [`set_gomaxprocs`](super::set_gomaxprocs)
/// changes it while goroutines run; the setting here (or the
/// `GOMAXPROCS` environment variable) is the count the scheduler starts
/// with.
pub fn gomaxprocs() -> usize {
    scheduler().procs()
}
