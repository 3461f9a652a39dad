use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorKind};
use crate::value::merge_object::MergeSeq;
use crate::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};

/// How deep a value stored in a namespace may nest lists and maps (promptc patch).
///
/// Namespaces are the only values a template can change: a loop that stores
/// `[ns.x]` in `ns.x` would otherwise build, within its fuel, a value nested
/// deeper than a thread's stack can drop, compare or print, and the process
/// would abort.  A namespace may not hold another namespace either, for the same
/// reason: a namespace holding itself is nested without end, and a chain of
/// namespaces each holding the next is as deep as it is long.
pub(crate) const MAX_STORED_DEPTH: usize = 128;

/// How many values [`Namespace::set_checked`] looks at before it refuses a value as
/// too large to store.
const MAX_CHECKED: usize = 10_000_000;

/// This object exists for the `namespace` function.
///
/// It's special in that it behaves like a dictionary in many ways but it's the only
/// object that can be used with `{% set %}` assignments.  This is used internally
/// in the vm via downcasting.
#[derive(Debug, Default)]
pub(crate) struct Namespace {
    data: Mutex<BTreeMap<Arc<str>, Value>>,
    /// promptc patch: for each attribute set with `{% set %}` that holds a list or map, its
    /// address and how deep it nests, found when it was stored (see [`Namespace::set_checked`]).
    heights: Mutex<BTreeMap<Arc<str>, (usize, usize)>>,
}

impl Object for Namespace {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.data.lock().unwrap().get(some!(key.as_str())).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let data = self.data.lock().unwrap();
        let keys = data.keys().cloned().map(Value::from);
        Enumerator::Values(keys.collect())
    }
}

impl Namespace {
    /// Stores `value` as `key` if it may be stored in a namespace: it nests lists, maps and
    /// sequences at most [`MAX_STORED_DEPTH`] deep and holds no namespace and no loop.
    ///
    /// Found without recursion. Each list or map is looked into once per shallower depth it
    /// is met at, so a value that shares its parts (`[x, x]` doubled many times) costs its
    /// distinct parts, not its paths; every value looked into is kept until the end, so that
    /// no address is reused meanwhile. A merged sequence (what `+` makes) is looked into by
    /// its parts, and a part this namespace holds now counts by the depth found when it was
    /// stored: `ns.x + [i]` costs `[i]`, not all of `ns.x` again.
    pub(crate) fn set_checked(&self, key: &str, value: Value) -> Result<(), Error> {
        let known: BTreeMap<usize, usize> =
            self.heights.lock().unwrap().values().copied().collect();
        // Object address -> the least depth it was looked into at, and the value itself.
        let mut seen: BTreeMap<usize, (usize, Value)> = BTreeMap::new();
        let mut pending = vec![(value.clone(), 1usize)];
        let mut checked = 0usize;
        let mut height = 0usize;
        let too_deep = || {
            Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "a namespace cannot hold a value that nests lists or maps more than \
                     {MAX_STORED_DEPTH} deep"
                ),
            )
        };
        while let Some((item, depth)) = pending.pop() {
            let Some(object) = item.as_object() else {
                continue;
            };
            if item.downcast_object_ref::<Namespace>().is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "a namespace cannot hold a namespace",
                ));
            }
            if crate::vm::is_loop(&item) {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "a namespace cannot hold a loop",
                ));
            }
            if matches!(object.repr(), ObjectRepr::Plain) {
                continue;
            }
            let address = object.address();
            if let Some(&stored) = known.get(&address) {
                let reach = depth + stored - 1;
                if reach > MAX_STORED_DEPTH {
                    return Err(too_deep());
                }
                height = height.max(reach);
                continue;
            }
            if depth > MAX_STORED_DEPTH {
                return Err(too_deep());
            }
            height = height.max(depth);
            match seen.get(&address) {
                Some((at, _)) if *at <= depth => continue,
                _ => {
                    seen.insert(address, (depth, item.clone()));
                }
            }
            if let Some(merged) = item.downcast_object_ref::<MergeSeq>() {
                for part in merged.parts() {
                    pending.push((part.clone(), depth));
                }
                continue;
            }
            let Ok(items) = item.try_iter() else {
                continue;
            };
            let is_map = item.kind() == ValueKind::Map;
            for inner in items {
                checked += 1;
                if checked > MAX_CHECKED {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        format!(
                            "a namespace cannot hold a value of more than {MAX_CHECKED} \
                             items"
                        ),
                    ));
                }
                // A map's keys are looked into too: a key can be a list.
                if is_map {
                    let inner = item.get_item_opt(&inner).unwrap_or_default();
                    if inner.as_object().is_some() {
                        pending.push((inner, depth + 1));
                    }
                }
                if inner.as_object().is_some() {
                    pending.push((inner, depth + 1));
                }
            }
        }
        let key: Arc<str> = key.into();
        let mut heights = self.heights.lock().unwrap();
        match value.as_object() {
            Some(object) if height > 0 => {
                heights.insert(key.clone(), (object.address(), height));
            }
            _ => {
                heights.remove(&key);
            }
        }
        drop(heights);
        self.data.lock().unwrap().insert(key, value);
        Ok(())
    }

    pub(crate) fn set_value(&self, key: &str, value: Value) {
        self.data.lock().unwrap().insert(key.into(), value);
    }
}
