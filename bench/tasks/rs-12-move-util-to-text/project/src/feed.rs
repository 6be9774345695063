use crate::post::Post;
use crate::util::truncate;

/// One feed entry per post: title, link and a summary of at most `summary_len` characters.
pub fn entries(posts: &[Post], summary_len: usize) -> Vec<(String, String, String)> {
    posts
        .iter()
        .map(|p| (p.title.clone(), p.url(), truncate(&p.body, summary_len)))
        .collect()
}
