"""``conversation``: saved conversations and follow-up questions."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.settings.base import _Frozen


class ConversationSettings(_Frozen):
    keep: bool = Field(True, description="Save the server's turns into conversations (POST /api/ask without a conversation_id starts one).")
    rewrite_role: Literal["router", "planner", "none"] = Field(
        "router",
        description="Model role that rewrites a follow-up into a standalone question (the planner is used when the "
        "router has no model); 'none': always the deterministic rule.",
    )
    history_turns: int = Field(4, description="Previous turns shown to the rewriting model, at most.")
    history_answer_chars: int = Field(400, description="Characters of each previous answer shown to the rewriting model.")
    followup_max_terms: int = Field(
        3,
        description="Deterministic rule: a follow-up with at most this many content terms (and no address of its own) "
        "depends on the previous turn and takes its subject.",
    )
    new_subject_max_share: float = Field(
        0.5, ge=0, le=1,
        description="Deterministic rule: a short question's new content term (one the previous subject lacks) that "
        "matches at least one passage and at most this share of them retrieves on its own: the question starts a "
        "new subject. A term in more of the corpus says nothing of a subject.",
    )
    unspaced_chars_per_term: int = Field(
        2, ge=1,
        description="Deterministic rule: a run of a script written without spaces between words (Chinese, Japanese, "
        "Thai, Lao, Khmer, Burmese) is one token however many words it holds; it counts as one content term per this "
        "many characters, so '霧笛はいつ鳴らしますか？' stands alone while '夜は？' is a follow-up.",
    )
    new_subject_min_terms: int = Field(
        2,
        description="Deterministic rule: a short question with this many new content terms of its own starts a new "
        "subject even when the corpus lacks them ('Who wrote about ice?'); fewer, and absent from the corpus: "
        "an ellipsis ('Why so early?'), a follow-up.",
    )
    carry_addresses: int = Field(
        0,
        description="Deterministic rule: addresses of the verses the previous turn cited, carried when its question named "
        "none. 0: an exact address hit outranks everything, so a follow-up on a new subject would keep answering from that verse.",
    )
    carry_titles: int = Field(
        0,
        description="Deterministic rule: titles of the previous turn's cited sources carried (by citation order). 0: "
        "a title's words pull its whole source into the lexical lanes, measured worse on the demo follow-ups.",
    )
    next_words: tuple[str, ...] = Field(
        ("next", "following", "subsequent", "следующий", "следующего", "следующем", "следующую", "следующая",
         "следующее", "дальнейший"),
        description="Words (lower-cased) for 'the next verse' after a turn about an address: with a verse word "
        "(corpus.verse_words, or 'one'; none when it ends the question: 'а следующий?') the follow-up asks for the "
        "book's next location ('BG 2.47' → 'BG 2.48'), with a model or without.",
    )
    previous_words: tuple[str, ...] = Field(
        ("previous", "preceding", "prior", "предыдущий", "предыдущего", "предыдущем", "предыдущую", "предыдущая",
         "предыдущее", "прошлый"),
        description="Words (lower-cased) for 'the previous verse': as next_words, the book's location before.",
    )
    list_limit_max: int = Field(200, description="GET /api/conversations: largest page.")
