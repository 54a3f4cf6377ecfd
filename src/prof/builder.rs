//! The one way a profile is made: sample types and the period, then
//! samples (a stack of return addresses, values, labels), encoded as
//! pprof's protobuf. The builder keeps the tables samples share: strings,
//! functions, locations (symbolised once per address, inlined frames as
//! lines), and the loaded objects as mappings.

use super::objects::{self, Object};
use super::proto::{self, Function, Line, Location, Mapping, ValueType};
use super::symbols::{display_name, symbols};
use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, SystemTime};

/// A sample's label: a string, or a number with its unit ("" for none;
/// pprof knows "bytes", "nanoseconds" and the like).
pub(crate) enum Label<'a> {
    Str(&'a str, &'a str),
    #[allow(dead_code)] // for numeric labels; tested below
    Num(&'a str, i64, &'a str),
}

/// A profile being made.
pub(crate) struct Builder {
    profile: proto::Profile,
    string_ids: HashMap<String, i64>,
    function_ids: HashMap<(String, String), u64>,
    /// By return address and the inlined frames left out of it.
    location_ids: HashMap<(usize, usize), u64>,
    /// The loaded objects, in the order of their mappings (ids from 1).
    objects: Vec<Object>,
}

impl Builder {
    /// A profile whose samples carry `sample_types` (type, unit) values,
    /// taken once per `period` of `period_type` (type, unit), stamped
    /// now, with the loaded objects as its mappings.
    pub(crate) fn new(
        sample_types: &[(&str, &str)],
        period_type: (&str, &str),
        period: i64,
    ) -> Builder {
        let mut b = Builder {
            profile: proto::Profile::default(),
            string_ids: HashMap::new(),
            function_ids: HashMap::new(),
            location_ids: HashMap::new(),
            objects: objects::loaded(),
        };
        // Index 0 is the empty string, as pprof requires.
        b.string("");
        b.profile.sample_type = sample_types
            .iter()
            .map(|&(t, u)| b.value_type(t, u))
            .collect();
        b.profile.period_type = Some(b.value_type(period_type.0, period_type.1));
        b.profile.period = period;
        b.profile.time_nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        let objects = std::mem::take(&mut b.objects);
        b.profile.mapping = objects
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
        b.objects = objects;
        b
    }

    /// The sample type `go tool pprof` shows unless told otherwise.
    pub(crate) fn default_sample_type(&mut self, t: &str) -> &mut Builder {
        self.profile.default_sample_type = self.string(t);
        self
    }

    /// How long the profile was taken over (a CPU profile's duration).
    pub(crate) fn duration(&mut self, d: Duration) -> &mut Builder {
        self.profile.duration_nanos = i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        self
    }

    /// Frames whose function matches `drop` (a regular expression), and
    /// every frame above them, are dropped by the reader, unless they
    /// match `keep`.
    #[allow(dead_code)] // for profiles that keep runtime frames; tested below
    pub(crate) fn frames(&mut self, drop: &str, keep: &str) -> &mut Builder {
        self.profile.drop_frames = self.string(drop);
        self.profile.keep_frames = self.string(keep);
        self
    }

    /// A line of text kept with the profile.
    #[allow(dead_code)] // tested below
    pub(crate) fn comment(&mut self, text: &str) -> &mut Builder {
        let id = self.string(text);
        self.profile.comment.push(id);
        self
    }

    /// One sample: `stack` is its return addresses, innermost first
    /// (zeros are left out), of whose first the `skip` innermost inlined
    /// frames are left out; `values` has one value per sample type.
    pub(crate) fn sample(
        &mut self,
        stack: &[usize],
        skip: usize,
        values: Vec<i64>,
        labels: &[Label<'_>],
    ) -> &mut Builder {
        let location_id = stack
            .iter()
            .enumerate()
            .filter(|&(_, &pc)| pc != 0)
            .map(|(i, &pc)| self.location(pc, if i == 0 { skip } else { 0 }))
            .collect();
        let label = labels
            .iter()
            .map(|l| match *l {
                Label::Str(key, value) => proto::Label {
                    key: self.string(key),
                    str: self.string(value),
                    ..proto::Label::default()
                },
                Label::Num(key, num, unit) => proto::Label {
                    key: self.string(key),
                    num,
                    num_unit: self.string(unit),
                    ..proto::Label::default()
                },
            })
            .collect();
        self.profile.sample.push(proto::Sample {
            location_id,
            value: values,
            label,
        });
        self
    }

    /// The encoded profile (uncompressed: pprof reads it as it reads
    /// gzip).
    pub(crate) fn encode(self) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.profile)
    }

    /// Writes the encoded profile to `out`.
    pub(crate) fn write(self, mut out: impl Write) -> std::io::Result<()> {
        out.write_all(&self.encode())
    }

    fn value_type(&mut self, t: &str, unit: &str) -> ValueType {
        ValueType {
            r#type: self.string(t),
            unit: self.string(unit),
        }
    }

    fn string(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.profile.string_table.len() as i64;
        self.profile.string_table.push(s.to_string());
        self.string_ids.insert(s.to_string(), id);
        id
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let key = (name.to_string(), file.to_string());
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.profile.function.len() as u64 + 1;
        let f = Function {
            id,
            name: self.string(&display_name(name)),
            system_name: self.string(name),
            filename: self.string(file),
        };
        self.profile.function.push(f);
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
        let id = self.profile.location.len() as u64 + 1;
        let mapping_id = self
            .objects
            .iter()
            .position(|o| (o.start..o.limit).contains(&(pc as u64)))
            .map_or(0, |i| i as u64 + 1);
        self.profile.location.push(Location {
            id,
            mapping_id,
            address: pc as u64,
            line,
        });
        self.location_ids.insert((pc, skip), id);
        id
    }
}

/// A profile's samples as names and values: each sample's function names
/// (innermost first, inlined frames included) and its values; `None` if
/// `bytes` is not a profile.
pub(crate) fn decode(bytes: &[u8]) -> Option<Vec<(Vec<String>, Vec<i64>)>> {
    let p: proto::Profile = prost::Message::decode(bytes).ok()?;
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

/// A profile's samples with their string labels: each sample's function
/// names (innermost first), values and (key, value) labels; `None` if
/// `bytes` is not a profile.
#[allow(clippy::type_complexity)]
pub(crate) fn decode_labelled(
    bytes: &[u8],
) -> Option<Vec<(Vec<String>, Vec<i64>, Vec<(String, String)>)>> {
    let p: proto::Profile = prost::Message::decode(bytes).ok()?;
    let s = |i: i64| p.string_table.get(i as usize).cloned().unwrap_or_default();
    let names = decode(bytes)?;
    Some(
        names
            .into_iter()
            .zip(&p.sample)
            .map(|((names, values), sample)| {
                let labels = sample
                    .label
                    .iter()
                    .filter(|l| l.str != 0)
                    .map(|l| (s(l.key), s(l.str)))
                    .collect();
                (names, values, labels)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn stack_here() -> Vec<usize> {
        let mut stack = Vec::new();
        crate::unwind::walk(|pc| {
            stack.push(pc);
            stack.len() < 16
        });
        stack
    }

    /// A CPU-like profile with every field the builder writes.
    fn labelled() -> Vec<u8> {
        let stack = stack_here();
        let mut b = Builder::new(
            &[("samples", "count"), ("cpu", "nanoseconds")],
            ("cpu", "nanoseconds"),
            10_000_000,
        );
        b.default_sample_type("cpu")
            .duration(Duration::from_millis(1500))
            .frames("^defergc::unwind::", "")
            .comment("made by the builder's test")
            .sample(
                &stack,
                0,
                vec![3, 30_000_000],
                &[
                    Label::Str("request", "GET /"),
                    Label::Num("bytes", 512, "bytes"),
                ],
            )
            .sample(&stack[1..], 0, vec![1, 10_000_000], &[]);
        b.encode()
    }

    #[test]
    fn labels_duration_and_frames_are_encoded() {
        let bytes = labelled();
        let p: proto::Profile = prost::Message::decode(&bytes[..]).unwrap();
        let s = |i: i64| p.string_table[i as usize].as_str();
        assert_eq!(p.string_table[0], "");
        assert_eq!(p.duration_nanos, 1_500_000_000);
        assert_eq!(
            (s(p.drop_frames), s(p.keep_frames)),
            ("^defergc::unwind::", "")
        );
        assert_eq!(s(p.comment[0]), "made by the builder's test");
        assert_eq!(s(p.default_sample_type), "cpu");
        assert_eq!(p.period, 10_000_000);
        let labels = &p.sample[0].label;
        assert_eq!((s(labels[0].key), s(labels[0].str)), ("request", "GET /"));
        assert_eq!(
            (s(labels[1].key), labels[1].num, s(labels[1].num_unit)),
            ("bytes", 512, "bytes")
        );
        // The second sample's stack shares the first one's locations.
        assert_eq!(p.sample[1].location_id[..], p.sample[0].location_id[1..]);
        assert!(p.mapping.iter().any(|m| m.id == p.location[0].mapping_id));
        let names = decode(&bytes).unwrap();
        assert!(
            names[0].0.iter().any(|n| n.ends_with("stack_here")),
            "{names:?}"
        );
    }

    #[test]
    fn go_tool_pprof_reads_labels_and_samples() {
        let has_go = std::process::Command::new("go")
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_go {
            eprintln!(
                "SKIPPED go tool pprof reads labels and samples: Go is not installed (apt-get install golang-go)"
            );
            return;
        }
        let path =
            std::env::temp_dir().join(format!("defergc-builder-{}.pprof", std::process::id()));
        std::fs::write(&path, labelled()).unwrap();
        let out = std::process::Command::new("go")
            .args(["tool", "pprof", "-raw"])
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for expected in [
            "samples/count cpu/nanoseconds",
            "request:[GET /]",
            "bytes:[512 bytes]",
            "stack_here",
        ] {
            assert!(text.contains(expected), "no {expected:?} in {text}");
        }
    }
}
