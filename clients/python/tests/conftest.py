"""The server that clients/python/run started, and clients of it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from leaguekit_client import LeagueClient


@dataclass(frozen=True)
class Server:
    url: str
    server_token: str
    viewer_token: str
    admin_token: str
    webhook_secret: str


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the tests with clients/python/run")
    return value


@pytest.fixture(scope="session")
def server() -> Server:
    return Server(
        url=_env("LEAGUEKIT_TEST_URL"),
        server_token=_env("LEAGUEKIT_TEST_SERVER_TOKEN"),
        viewer_token=_env("LEAGUEKIT_TEST_VIEWER_TOKEN"),
        admin_token=_env("LEAGUEKIT_TEST_ADMIN_TOKEN"),
        webhook_secret=_env("LEAGUEKIT_TEST_WEBHOOK_SECRET"),
    )


@pytest.fixture
def game(server: Server) -> Iterator[LeagueClient]:
    """A game server's client (server token)."""
    with LeagueClient(server.url, server.server_token) as c:
        yield c


@pytest.fixture
def ops(server: Server) -> Iterator[LeagueClient]:
    """An operator's client (admin token)."""
    with LeagueClient(server.url, server.admin_token) as c:
        yield c
