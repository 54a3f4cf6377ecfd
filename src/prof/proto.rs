//! pprof's `profile.proto` (github.com/google/pprof, `proto/profile.proto`)
//! as prost messages, declared by hand: every field a profile of ours
//! writes, with the schema's tags. Field meanings are the schema's; the
//! builder (`builder.rs`) is the only writer.

/// A whole profile.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Profile {
    /// What each sample value is, in order.
    #[prost(message, repeated, tag = "1")]
    pub(crate) sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub(crate) function: Vec<Function>,
    /// Every string the profile names, by index; index 0 is "".
    #[prost(string, repeated, tag = "6")]
    pub(crate) string_table: Vec<String>,
    /// A regular expression: frames whose function matches, and all
    /// above them, are dropped when the profile is read.
    #[prost(int64, tag = "7")]
    pub(crate) drop_frames: i64,
    /// A regular expression of frames kept despite `drop_frames`.
    #[prost(int64, tag = "8")]
    pub(crate) keep_frames: i64,
    #[prost(int64, tag = "9")]
    pub(crate) time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub(crate) duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub(crate) period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub(crate) period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub(crate) comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub(crate) default_sample_type: i64,
}

/// A value's type and unit (string table indices).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ValueType {
    #[prost(int64, tag = "1")]
    pub(crate) r#type: i64,
    #[prost(int64, tag = "2")]
    pub(crate) unit: i64,
}

/// One sample: a stack (innermost location first), its values and labels.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub(crate) location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub(crate) value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) label: Vec<Label>,
}

/// A sample's label: a string or a number (with its unit) under a key.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Label {
    #[prost(int64, tag = "1")]
    pub(crate) key: i64,
    #[prost(int64, tag = "2")]
    pub(crate) str: i64,
    #[prost(int64, tag = "3")]
    pub(crate) num: i64,
    #[prost(int64, tag = "4")]
    pub(crate) num_unit: i64,
}

/// A loaded object's executable segment.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Mapping {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(uint64, tag = "2")]
    pub(crate) memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub(crate) memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub(crate) file_offset: u64,
    #[prost(int64, tag = "5")]
    pub(crate) filename: i64,
    #[prost(int64, tag = "6")]
    pub(crate) build_id: i64,
    #[prost(bool, tag = "7")]
    pub(crate) has_functions: bool,
    #[prost(bool, tag = "8")]
    pub(crate) has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub(crate) has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub(crate) has_inline_frames: bool,
}

/// An address, with the lines (innermost inlined frame first) it stands
/// for.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Location {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(uint64, tag = "2")]
    pub(crate) mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub(crate) address: u64,
    #[prost(message, repeated, tag = "4")]
    pub(crate) line: Vec<Line>,
}

/// A function and line a location is in.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Line {
    #[prost(uint64, tag = "1")]
    pub(crate) function_id: u64,
    #[prost(int64, tag = "2")]
    pub(crate) line: i64,
}

/// A function: its shown and its full (system) name, its file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Function {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(int64, tag = "2")]
    pub(crate) name: i64,
    #[prost(int64, tag = "3")]
    pub(crate) system_name: i64,
    #[prost(int64, tag = "4")]
    pub(crate) filename: i64,
}
