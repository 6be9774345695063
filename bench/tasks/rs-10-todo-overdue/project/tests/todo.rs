use todo_list::{Date, TodoList};

fn d(s: &str) -> Date {
    s.parse().unwrap()
}

fn titles(todos: &[&todo_list::Todo]) -> Vec<String> {
    todos.iter().map(|t| t.title.clone()).collect()
}

fn sample() -> TodoList {
    let mut list = TodoList::new();
    list.add("renew passport", Some(d("2024-03-01")));
    list.add("pay rent", Some(d("2024-02-28")));
    list.add("call mum", None);
    list.add("file taxes", Some(d("2024-04-30")));
    list.add("book dentist", Some(d("2024-02-29")));
    list
}

#[test]
fn dates_parse_and_validate() {
    assert_eq!(d("2024-02-29").to_string(), "2024-02-29");
    assert!("2023-02-29".parse::<Date>().is_err());
    assert!("2024-13-01".parse::<Date>().is_err());
    assert!(d("2024-01-31") < d("2024-02-01"));
}

#[test]
fn due_on() {
    let list = sample();
    assert_eq!(titles(&list.due_on(d("2024-02-28"))), ["pay rent"]);
}

#[test]
fn overdue_lists_open_items_due_before_today_oldest_first() {
    let list = sample();
    assert_eq!(
        titles(&list.overdue(d("2024-03-02"))),
        ["pay rent", "book dentist", "renew passport"]
    );
}

#[test]
fn due_today_is_not_overdue() {
    let list = sample();
    assert_eq!(titles(&list.overdue(d("2024-02-29"))), ["pay rent"]);
}

#[test]
fn done_items_are_never_overdue() {
    let mut list = sample();
    let rent = list.open().find(|t| t.title == "pay rent").unwrap().id;
    assert!(list.complete(rent));
    assert_eq!(titles(&list.overdue(d("2024-03-01"))), ["book dentist"]);
    assert!(list.overdue(d("2024-01-01")).is_empty());
}
