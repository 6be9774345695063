use crate::date::Date;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TodoId(pub u32);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Todo {
    pub id: TodoId,
    pub title: String,
    pub due: Option<Date>,
    pub done: bool,
}

#[derive(Debug, Default)]
pub struct TodoList {
    todos: Vec<Todo>,
    next_id: u32,
}

impl TodoList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, title: &str, due: Option<Date>) -> TodoId {
        self.next_id += 1;
        let id = TodoId(self.next_id);
        self.todos.push(Todo {
            id,
            title: title.to_owned(),
            due,
            done: false,
        });
        id
    }

    /// Mark a todo done; false when there is no such todo.
    pub fn complete(&mut self, id: TodoId) -> bool {
        match self.todos.iter_mut().find(|t| t.id == id) {
            Some(todo) => {
                todo.done = true;
                true
            }
            None => false,
        }
    }

    pub fn open(&self) -> impl Iterator<Item = &Todo> {
        self.todos.iter().filter(|t| !t.done)
    }

    /// Open todos due on `day`.
    pub fn due_on(&self, day: Date) -> Vec<&Todo> {
        self.open().filter(|t| t.due == Some(day)).collect()
    }

    pub fn len(&self) -> usize {
        self.todos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.todos.is_empty()
    }
}
