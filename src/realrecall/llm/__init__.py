"""TEMPORARY stand-in for the llm helper's package: only the interface the generate stage codes against.

Replaced by the llm branch on merge (keep theirs).
"""

from realrecall.llm.types import ChatClient, ChatRequest, ChatResult, LLMConfig, Usage

__all__ = ["ChatClient", "ChatRequest", "ChatResult", "LLMConfig", "Usage"]
