//! `order` overrides: move an item to a 1-based position in a list.

/// Items with an `order` are taken out, then put back at their position (lowest first; past
/// the end means last). Items without one keep their relative order.
pub fn apply_order(ids: &[String], order_of: impl Fn(&str) -> Option<usize>) -> Vec<String> {
    let mut moved: Vec<(usize, &String)> = ids
        .iter()
        .filter_map(|id| order_of(id).map(|position| (position, id)))
        .collect();
    moved.sort_by_key(|(position, _)| *position);
    let mut result: Vec<String> = ids
        .iter()
        .filter(|id| order_of(id).is_none())
        .cloned()
        .collect();
    for (position, id) in moved {
        let index = position.saturating_sub(1).min(result.len());
        result.insert(index, id.clone());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn moves_items_to_their_position() {
        let list = ids(&["a", "b", "c", "d"]);
        let order = |id: &str| match id {
            "d" => Some(1),
            "a" => Some(3),
            _ => None,
        };
        assert_eq!(apply_order(&list, order), ids(&["d", "b", "a", "c"]));
        assert_eq!(
            apply_order(&list, |id| (id == "a").then_some(99)),
            ids(&["b", "c", "d", "a"])
        );
        assert_eq!(apply_order(&list, |_| None), list);
    }

    // As the README says: of two with the same position, the one listed later takes it.
    #[test]
    fn of_two_at_one_position_the_later_listed_takes_it() {
        let list = ids(&["a", "b", "c"]);
        let order = |id: &str| matches!(id, "a" | "b").then_some(1);
        assert_eq!(apply_order(&list, order), ids(&["b", "a", "c"]));
    }
}
