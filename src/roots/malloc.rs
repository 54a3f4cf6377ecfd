//! Root memory under `nogc`: nothing is collected, so nothing is scanned
//! and no hook has anything to do.

use super::Collector;

/// The malloc backend, as a collector of root memory: a bystander.
pub(crate) struct Malloc;

impl Collector for Malloc {
    type Stack = ();
    type Block = ();
}
