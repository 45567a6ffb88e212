"""RFC 6570 matching of resource templates (`app.uri_template`): hand-picked cases, and a property
test that whatever the `uritemplate` library expands, the matcher reads back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_bindings.runtime.app.uri_template import Template, TemplateError

CASES = [
    ("users://{id}", "users://42", {"id": "42"}),
    ("users://{id}", "users://", None),  # a simple variable is never empty
    ("users://{id}", "users://a/b", None),
    ("users://{id}/posts/{post}", "users://ada/posts/first%20post", {"id": "ada", "post": "first post"}),
    ("file:///{+path}", "file:///etc/hosts", {"path": "etc/hosts"}),
    ("file:///{+path}", "file:///a,b/c", {"path": "a,b/c"}),
    ("tree://x{/parts*}", "tree://x/a/b/c", {"parts": ["a", "b", "c"]}),
    ("tree://x{/parts*}", "tree://x", {}),
    ("list://{items*}", "list://a,b", {"items": ["a", "b"]}),
    ("find://q{?term,limit}", "find://q?limit=5&term=cats", {"term": "cats", "limit": "5"}),
    ("find://q{?term,limit}", "find://q?term=a%26b", {"term": "a&b"}),
    ("find://q{?term,limit}", "find://q", {}),
    ("find://q{?tag*}", "find://q?tag=a&tag=b", {"tag": ["a", "b"]}),
    ("find://q{?a}{&b}", "find://q?a=1&b=2", {"a": "1", "b": "2"}),
    ("doc://{name}{.ext}", "doc://readme.md", {"name": "readme", "ext": "md"}),
    ("doc://x{;v,w}", "doc://x;v=1;w", {"v": "1", "w": ""}),
    ("page://p{#section}", "page://p#intro/part", {"section": "intro/part"}),
    ("short://{code:3}", "short://abc", {"code": "abc"}),
    ("short://{code:3}", "short://abcd", None),
    ("users://{id}", "other://42", None),
]


@pytest.mark.parametrize(("template", "uri", "expected"), CASES)
def test_match(template: str, uri: str, expected: dict[str, object] | None) -> None:
    parsed = Template(template)
    parsed.check()
    assert parsed.match(uri) == expected


def test_expand_is_the_librarys() -> None:
    template = Template("users://{id}/posts{/rest*}{?q}")
    assert template.expand({"id": "a b", "rest": ["x", "y"], "q": "1&2"}) == "users://a%20b/posts/x/y?q=1%262"


@pytest.mark.parametrize(
    "template",
    ["users://{id", "users://{}", "users://{a b}", "users://{!a}", "users://{a:10000}", "no-scheme/{a}", "s://{a}{b}"],
)
def test_refused(template: str) -> None:
    with pytest.raises(TemplateError):
        Template(template).check()


# What the property test expands: a value of any printable text (the library percent-encodes it).
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
segment = st.lists(text, min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(user=text, post=text, rest=segment, term=text)
def test_expansions_read_back(user: str, post: str, rest: list[str], term: str) -> None:
    template = Template("users://{user}/posts/{post}{/rest*}{?term}")
    values: dict[str, str | list[str]] = {"user": user, "post": post, "rest": rest, "term": term}
    assert template.match(template.expand(values)) == values


@settings(max_examples=200, deadline=None)
@given(path=text, lang=text)
def test_reserved_expansions_read_back(path: str, lang: str) -> None:
    template = Template("file:///{+path}{?lang}")
    # Reserved expansion passes "%XX" through as is: a value holding one reads back decoded (documented).
    values = {"path": path.replace("?", "").replace("#", "").replace("%", "") or "x", "lang": lang}
    assert template.match(template.expand(values)) == values
