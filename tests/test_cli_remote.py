"""`procure --server`: the same results, output and exit statuses as embedded, against a real
server on a loopback port; the bearer token is sent, never printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import SMALL_SCENARIO, run
from service_support import TOKEN_A, make_pki, serve_with_tokens, start, write_tokens

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "2", "--format", "json")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_with_tokens(tmp_path_factory.mktemp("server"))


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PROCURE_TOKEN", TOKEN_A)
    return TOKEN_A


def _without_timings(document: dict[str, object]) -> dict[str, object]:
    """The response minus its wall-clock solve time, the one field two runs may differ in."""
    text = json.dumps(document)
    return json.loads(
        text, object_hook=lambda d: {k: v for k, v in d.items() if k != "solve_time_s"}
    )


def test_optimize_gives_the_same_response_embedded_and_remote(
    capsys: pytest.CaptureFixture[str], server: str, token: str
) -> None:
    embedded = run(capsys, "optimize", *FEASIBLE)
    remote = run(capsys, "--server", server, "optimize", *FEASIBLE)
    assert embedded.code == remote.code == 0
    assert _without_timings(json.loads(remote.out)) == _without_timings(json.loads(embedded.out))
    assert "uploaded catalog" in remote.err and token not in remote.err + remote.out


def test_sweep_gives_the_same_rows_embedded_and_remote(
    capsys: pytest.CaptureFixture[str], server: str, token: str
) -> None:
    grid = ("sweep", *SMALL_SCENARIO, "--budgets", "1e5,1e6", "--targets", "8", "--format", "json")
    embedded = run(capsys, *grid)
    remote = run(capsys, "--quiet", "--server", server, *grid)
    assert embedded.code == remote.code == 0
    assert _without_timings(json.loads(remote.out)) == _without_timings(json.loads(embedded.out))
    assert remote.err == ""  # --quiet: no upload note


def test_a_bad_value_fails_with_the_embedded_message_and_status(
    capsys: pytest.CaptureFixture[str], server: str, token: str
) -> None:
    args = (
        "optimize",
        "--catalog",
        "infiniband-ndr",
        "--workload",
        "bert-large",
        "--target-hours",
        "-8",
    )
    embedded = run(capsys, *args)
    remote = run(capsys, "--server", server, *args)
    assert embedded.code == remote.code == 3
    assert remote.err == embedded.err


def test_a_token_file_is_read_and_a_wrong_token_exits_5_without_echoing_it(
    capsys: pytest.CaptureFixture[str], server: str, tmp_path: Path
) -> None:
    wrong = "not-the-right-token-0123456789"
    (tmp_path / "good").write_text(TOKEN_A + "\n")
    (tmp_path / "bad").write_text(wrong + "\n")
    good = run(
        capsys,
        "--server",
        server,
        "--token-file",
        str(tmp_path / "good"),
        "catalog",
        "list",
        "--format",
        "json",
    )
    bad = run(capsys, "--server", server, "--token-file", str(tmp_path / "bad"), "catalog", "list")
    assert good.code == 0 and isinstance(json.loads(good.out), list)
    assert bad.code == 5 and bad.err.startswith("error: ") and bad.err.count("\n") == 1
    assert wrong not in bad.err + bad.out


def test_no_token_exits_5(
    capsys: pytest.CaptureFixture[str], server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROCURE_TOKEN", raising=False)
    result = run(capsys, "--server", server, "catalog", "list")
    assert result.code == 5


def test_an_unreachable_server_is_one_line_and_exit_5(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys,
        "--server",
        "127.0.0.1:1",
        "optimize",
        "--catalog",
        "infiniband-ndr",
        "--workload",
        "bert-large",
        "--target-hours",
        "8",
    )
    assert result.code == 5
    assert result.err.startswith("error: server 127.0.0.1:1 unavailable: ")
    assert result.err.count("\n") == 1


def test_the_catalog_store_commands_work_on_the_server(
    capsys: pytest.CaptureFixture[str], server: str, token: str, tmp_path: Path
) -> None:
    remote = ("--server", server, "catalog")
    imported = run(capsys, *remote, "import", SMALL_SCENARIO[1], "--name", "quotes")
    listed = json.loads(run(capsys, *remote, "list", "--format", "json").out)
    exported = run(capsys, *remote, "export", "quotes@1", str(tmp_path / "out"))
    shown = run(capsys, *remote, "show", "quotes", "--format", "json")
    deleted = run(capsys, *remote, "delete", "quotes@1")
    assert imported.code == 0 and imported.out.startswith("stored quotes@1 ")
    assert "quotes@1" in {c["ref"] for c in listed}
    assert exported.code == 0 and (tmp_path / "out" / "servers.csv").is_file()
    assert shown.code == 0 and json.loads(shown.out)["name"] == "quotes"
    assert deleted.out.startswith("deleted quotes@1 ")
    assert run(capsys, *remote, "show", "quotes@1").code == 3


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A mutual-TLS server and the folder with its CA and a client certificate."""
    folder = tmp_path_factory.mktemp("pki")
    make_pki(folder)
    service, address = start(
        folder,
        tokens_file=write_tokens(folder),
        tls_cert=folder / "server.pem",
        tls_key=folder / "server.key",
        tls_client_ca=folder / "ca.pem",
    )
    yield address, folder
    service.shutdown(grace_s=0)


@pytest.mark.slow
def test_tls_with_a_client_certificate_is_served(
    capsys: pytest.CaptureFixture[str], tls_server: tuple[str, Path], token: str
) -> None:
    address, pki = tls_server
    tls = ("--server", address, "--tls-ca", str(pki / "ca.pem"))
    served = run(
        capsys,
        *tls,
        "--tls-cert",
        str(pki / "client.pem"),
        "--tls-key",
        str(pki / "client.key"),
        "catalog",
        "list",
        "--format",
        "json",
    )
    refused = run(capsys, *tls, "catalog", "list")
    assert served.code == 0 and json.loads(served.out) == []
    assert refused.code == 5 and refused.err.count("\n") == 1
