use crate::text::slugify;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    pub title: String,
    pub slug: String,
    pub body: String,
    pub tags: Vec<String>,
}

impl Post {
    pub fn new(title: &str, body: &str) -> Post {
        Post {
            title: title.to_owned(),
            slug: slugify(title),
            body: body.to_owned(),
            tags: Vec::new(),
        }
    }

    pub fn with_tags(mut self, tags: &[&str]) -> Post {
        self.tags = tags.iter().map(|t| slugify(t)).collect();
        self
    }

    pub fn url(&self) -> String {
        format!("/posts/{}/", self.slug)
    }
}
