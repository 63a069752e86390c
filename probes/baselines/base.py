"""The base of answerers that read the item itself (its answers, its task), not only the prompt."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from models.base import Backend
from models.types import GenerateConfig, Message, Output, ProviderError
from probes.asking.prompting import Prompt
from probes.core.types import Item


class ItemBaseline(Backend):
    """An offline answerer: no key, no weights, no network. The runner gives it the item beside
    the prompt (`answer`); it never answers a bare conversation."""

    endpoint = "local"

    @abstractmethod
    async def answer(self, item: Item, prompt: Prompt, config: GenerateConfig) -> Output:
        """The reply to `item` (as asked, after any perturbation) sent as `prompt`."""

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        raise ProviderError(f"{self.model_id} answers benchmark items, not free conversations")


async def ask(backend: Backend, item: Item, prompt: Prompt, config: GenerateConfig) -> Output:
    """One reply from any answerer: a baseline reads the item, a model the conversation."""
    if isinstance(backend, ItemBaseline):
        return await backend.answer(item, prompt, config)
    return await backend.generate(prompt.messages, config)
