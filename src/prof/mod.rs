//! Profiles in pprof's protobuf format, which `go tool pprof` reads.
//!
//! - `builder.rs`: the one encoder every profile uses: sample types and
//!   period, samples (a stack, values, string and numeric labels),
//!   locations symbolised once per address with inlined frames as lines
//!   (`symbols.rs`), the loaded objects with their build ids as mappings
//!   (`objects.rs`), drop/keep frames, comments, time and duration;
//! - `cpu.rs`: the CPU profile, from the samples the profiling signal
//!   took (counted off the signal path), with their label sets;
//! - `ring.rs`: the lock-free ring the profiling signal's handler writes
//!   its samples into and one reader drains;
//! - `proto.rs`: the messages of pprof's `profile.proto`;
//! - `heap.rs`: the heap profile, from the samples the collector hands
//!   over (`gc::profile::write_heap_profile`);
//! - `goroutine.rs`: the goroutine profile, from the stacks the
//!   scheduler hands over (`go::write_goroutine_profile`).
//!
//! The stacks are walked by `unwind` (by unwind tables when a sample may
//! allocate, by frame pointers inside a signal handler).
//!
//! # Layering
//!
//! `prof` uses `unwind` and nothing else of the crate: it sits right
//! below `unwind` in docs/design.md's layer list, above `gc`. A profile's
//! events belong to the layer where they happen, which records them and
//! hands them to `prof` to encode: the collector its heap samples (its
//! `gc::profile` keeps the sampling, which allocation and collection
//! call, and the public entry points), the scheduler (`go`, further
//! down) its goroutines for a goroutine profile and its block and mutex
//! events, and the signal layer its CPU samples, walked with
//! `unwind::walk_from`. So data flows one way, from the layers that own
//! the events into `prof`, and `prof` names none of them.
//!
//! # Why prost
//!
//! The messages are prost structs declared by hand with `#[derive(
//! prost::Message)]` (`proto.rs`): a well-kept encoder, no `protoc` and
//! no build script, the schema's tags in one place. It costs the build
//! prost, prost-derive and bytes, small and already compiled for other
//! crates of the ecosystem, against a varint and length-delimited encoder
//! of our own to keep correct. The `pprof` crate's types were not taken:
//! they come with its CPU profiler (a signal handler and a global
//! profiler of its own) and its dependencies, where a profile of ours
//! needs only the messages.

pub(crate) mod builder;
pub(crate) mod contention;
pub(crate) mod cpu;
pub(crate) mod goroutine;
pub(crate) mod heap;
mod objects;
mod proto;
pub(crate) mod ring;
mod symbols;
pub(crate) mod trace;
