use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorKind};
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

/// How many values [`Namespace::check_storable`] looks at before it refuses a value as
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
    /// Whether `value` may be stored in a namespace: it nests lists, maps and
    /// sequences at most [`MAX_STORED_DEPTH`] deep and holds no namespace.
    ///
    /// Found without recursion, and each list or map is looked into once per depth
    /// it is met at no deeper than before, so a value that shares its parts (`[x, x]`
    /// doubled many times) costs its distinct parts, not its paths.
    pub(crate) fn check_storable(value: &Value) -> Result<(), Error> {
        // Object address -> the least depth it was looked into at.
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        let mut pending = vec![(value.clone(), 1usize)];
        let mut checked = 0usize;
        while let Some((value, depth)) = pending.pop() {
            let Some(object) = value.as_object() else {
                continue;
            };
            if value.downcast_object_ref::<Namespace>().is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "a namespace cannot hold a namespace",
                ));
            }
            if matches!(object.repr(), ObjectRepr::Plain) {
                continue;
            }
            if depth > MAX_STORED_DEPTH {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "a namespace cannot hold a value that nests lists or maps more \
                         than {MAX_STORED_DEPTH} deep"
                    ),
                ));
            }
            match seen.get(&object.address()) {
                Some(&at) if at <= depth => continue,
                _ => {
                    seen.insert(object.address(), depth);
                }
            }
            let Ok(items) = value.try_iter() else {
                continue;
            };
            let is_map = value.kind() == ValueKind::Map;
            for item in items {
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
                    let item = value.get_item_opt(&item).unwrap_or_default();
                    if item.as_object().is_some() {
                        pending.push((item, depth + 1));
                    }
                }
                if item.as_object().is_some() {
                    pending.push((item, depth + 1));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn set_value(&self, key: &str, value: Value) {
        self.data.lock().unwrap().insert(key.into(), value);
    }
}
