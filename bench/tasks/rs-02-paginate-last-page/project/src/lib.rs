//! Split a list into fixed-size pages.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<'a, T> {
    /// 1-based page number.
    pub number: usize,
    pub of: usize,
    pub items: &'a [T],
}

/// How many pages `total` items fill at `per_page` items a page (at least one page).
pub fn page_count(total: usize, per_page: usize) -> usize {
    assert!(per_page > 0, "per_page must be positive");
    (total / per_page).max(1)
}

/// Page `number` (1-based), or `None` past the last page.
pub fn page<T>(items: &[T], per_page: usize, number: usize) -> Option<Page<'_, T>> {
    let of = page_count(items.len(), per_page);
    if number == 0 || number > of {
        return None;
    }
    let start = (number - 1) * per_page;
    let end = (start + per_page).min(items.len());
    Some(Page {
        number,
        of,
        items: &items[start..end],
    })
}

/// Every page in order.
pub fn pages<T>(items: &[T], per_page: usize) -> Vec<Page<'_, T>> {
    (1..=page_count(items.len(), per_page))
        .filter_map(|n| page(items, per_page, n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_multiple() {
        let items: Vec<u32> = (1..=6).collect();
        assert_eq!(page_count(items.len(), 3), 2);
        assert_eq!(page(&items, 3, 2).unwrap().items, &[4, 5, 6]);
    }

    #[test]
    fn partial_last_page() {
        let items: Vec<u32> = (1..=7).collect();
        assert_eq!(page_count(items.len(), 3), 3);
        let last = page(&items, 3, 3).unwrap();
        assert_eq!(last.items, &[7]);
        assert_eq!(last.of, 3);
    }

    #[test]
    fn fewer_items_than_a_page() {
        let items = ["a", "b"];
        assert_eq!(pages(&items, 10).len(), 1);
        assert_eq!(pages(&items, 10)[0].items, &["a", "b"]);
    }

    #[test]
    fn empty_list_has_one_empty_page() {
        let items: [u8; 0] = [];
        assert_eq!(page(&items, 5, 1).unwrap().items, &[] as &[u8]);
        assert_eq!(page(&items, 5, 2), None);
    }

    #[test]
    fn all_items_appear_once() {
        let items: Vec<usize> = (0..23).collect();
        let seen: Vec<usize> = pages(&items, 5)
            .iter()
            .flat_map(|p| p.items.iter().copied())
            .collect();
        assert_eq!(seen, items);
    }
}
