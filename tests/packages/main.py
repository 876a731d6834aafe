"""A user's program with the Python wheel, checked by mypy --strict: open a session the CLI made,
apply an update, assemble the next request."""

import json
import sys
from pathlib import Path

from workmem import ChatMessage, ContextRequest, ContextStats, Engine, Session


def main(directory: str, update: str) -> None:
    engine = Engine()
    with Session.open(directory) as session:
        applied = session.apply(engine, Path(update).read_text())
        request = ContextRequest(system_prompt="You are a careful engineer.", overview=session.overview(),
                                 history=[ChatMessage("user", "Go on.")])
    messages = engine.assemble(request)
    messages.append(ChatMessage("system", engine.context_meta(ContextStats(tokens_used=1000, tokens_max=128000))))
    print(json.dumps({"runtime": "python", "seq": applied.seq, "added": applied.added, "messages": len(messages),
                      "overview": messages[1].content}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
