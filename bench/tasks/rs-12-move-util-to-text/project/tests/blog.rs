use blog::feed::entries;
use blog::post::Post;
use blog::text::{slugify, truncate};

#[test]
fn slugs() {
    assert_eq!(slugify("Hello, World!"), "hello-world");
    assert_eq!(
        slugify("  Rust 2024 -- what's new?"),
        "rust-2024-what-s-new"
    );
    assert_eq!(slugify("!!!"), "");
}

#[test]
fn truncation() {
    assert_eq!(truncate("short", 10), "short");
    assert_eq!(truncate("the quick brown fox", 12), "the quick…");
    assert_eq!(truncate("supercalifragilistic", 6), "super…");
}

#[test]
fn posts_and_feed() {
    let post = Post::new(
        "Moving House",
        "We packed everything into boxes and then some more boxes.",
    )
    .with_tags(&["Life Stuff", "home"]);
    assert_eq!(post.url(), "/posts/moving-house/");
    assert_eq!(post.tags, ["life-stuff", "home"]);
    let feed = entries(&[post], 22);
    assert_eq!(feed[0].2, "We packed everything…");
}
