"""leaguekit-client: a game server's client of ``leaguekit serve``.

- :class:`LeagueClient` (and :class:`AsyncLeagueClient`): every endpoint of the HTTP API,
  with request ids and safe retries; answers typed by :mod:`leaguekit_client.models`,
  generated from the server's OpenAPI document.
- :meth:`LeagueClient.player_events`, :meth:`LeagueClient.bracket_events`: the live
  event streams, resumed with ``Last-Event-ID``, ending with :class:`StreamEnded` when
  the server ends them; events in :mod:`leaguekit_client.events`.
- :func:`verify_webhook`, :func:`verify_standard_webhook`: check a webhook's
  signature (``Leaguekit-Signature``, or Standard Webhooks' ``webhook-*`` headers) and
  return its event.
"""

from . import events, models
from ._core import Retries, __version__, new_request_id
from ._errors import (
    LeagueError,
    MalformedEvent,
    MalformedSignatureHeader,
    SignatureMismatch,
    StaleTimestamp,
    StreamDisconnected,
    WebhookVerificationError,
)
from .aio import AsyncEventStream, AsyncLeagueClient
from .client import EventStream, LeagueClient
from .events import (
    BracketClosed,
    Event,
    OutcomeEvent,
    PeriodClosed,
    PlayerDemoted,
    PlayerOvertaken,
    PlayerPlaced,
    PlayerPromoted,
    PlayerResettled,
    PlayerStayed,
    Reward,
    RewardClaimed,
    RewardGranted,
    ScoreAdjusted,
    Standings,
    StreamEnded,
    StreamError,
    StreamItem,
    parse_event,
    parse_event_json,
)
from .webhooks import (
    SIGNATURE_HEADER,
    WHSEC_PREFIX,
    sign_standard_webhook,
    sign_webhook,
    standard_webhook_key,
    verify_standard_webhook,
    verify_webhook,
)

__all__ = [
    "__version__",
    "AsyncEventStream",
    "AsyncLeagueClient",
    "BracketClosed",
    "Event",
    "EventStream",
    "LeagueClient",
    "LeagueError",
    "MalformedEvent",
    "MalformedSignatureHeader",
    "OutcomeEvent",
    "PeriodClosed",
    "PlayerDemoted",
    "PlayerOvertaken",
    "PlayerPlaced",
    "PlayerPromoted",
    "PlayerResettled",
    "PlayerStayed",
    "Retries",
    "Reward",
    "RewardClaimed",
    "RewardGranted",
    "SIGNATURE_HEADER",
    "ScoreAdjusted",
    "SignatureMismatch",
    "StaleTimestamp",
    "Standings",
    "StreamDisconnected",
    "StreamEnded",
    "StreamError",
    "StreamItem",
    "WHSEC_PREFIX",
    "WebhookVerificationError",
    "events",
    "models",
    "new_request_id",
    "parse_event",
    "parse_event_json",
    "sign_standard_webhook",
    "sign_webhook",
    "standard_webhook_key",
    "verify_standard_webhook",
    "verify_webhook",
]
