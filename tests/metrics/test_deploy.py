"""deploy/: the Dockerfile, Compose and Kubernetes files parse, and their ports, probes
and environment variables are the ones the server really uses."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scorewire.server.app import SERVICE_NAME
from scorewire.settings import Settings

from tests.metrics.helpers import DEPLOY, ROOT, MetricsServer
from tests.support.components import require_component

DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "k8s"
REPLICAS = ("scorewire-1", "scorewire-2")


def settings_from_env(env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings as the server would read them from exactly these variables.

    Every SCOREWIRE_* name must be a Settings field: pydantic-settings ignores unknown
    ones, so a misspelt variable would silently do nothing.
    """
    unknown = sorted(
        k
        for k in env
        if k.startswith("SCOREWIRE_")
        and k.removeprefix("SCOREWIRE_").lower() not in Settings.model_fields
    )
    assert not unknown, f"not settings: {unknown}"
    for key in list(os.environ):
        if key.startswith("SCOREWIRE_"):
            monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("SCOREWIRE_"):
            monkeypatch.setenv(key, value)
    return Settings()


# --- Dockerfile -------------------------------------------------------------------------------


def dockerfile_stages() -> list[list[str]]:
    """Instructions per stage, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def final_stage() -> list[str]:
    return dockerfile_stages()[-1]


def instruction(stage: list[str], name: str) -> list[str]:
    """The arguments of every `name` instruction of a stage."""
    return [line.split(None, 1)[1] for line in stage if line.split(None, 1)[0].upper() == name]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in instruction(final_stage(), "ENV"):
        for key, value in re.findall(r"(\w+)=(\S+)", args):
            env[key] = value
    return env


def healthcheck_command() -> list[str]:
    (args,) = instruction(final_stage(), "HEALTHCHECK")
    exec_form = args[args.index("CMD") + 3 :].strip()
    command = json.loads(exec_form)
    assert isinstance(command, list), "HEALTHCHECK must use the exec form"
    return [str(c) for c in command]


def test_dockerfile_is_multi_stage_and_the_final_image_has_no_compilers() -> None:
    # The builder makes wheels; the final stage only copies the virtualenv.
    stages = dockerfile_stages()
    assert len(stages) >= 2
    assert any(" AS builder" in stage[0] for stage in stages[:-1])
    final = "\n".join(final_stage())
    assert "COPY --from=builder" in final
    for tool in ("gcc", "g++", "build-essential", "clang", "make ", "pip wheel", "pip install"):
        assert tool not in final, f"{tool!r} in the final stage"
    base = instruction(final_stage(), "FROM")[0]
    assert base == "${PYTHON_IMAGE}"
    default_image = re.search(r"ARG PYTHON_IMAGE=(\S+)", DOCKERFILE.read_text())
    assert default_image and "slim" in default_image.group(1)


def test_dockerfile_runs_as_a_non_root_user_that_k8s_also_uses() -> None:
    # USER is numeric and not 0, and the Kubernetes securityContext names the same uid.
    (user,) = instruction(final_stage(), "USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or int(gid) > 0)
    deployment = k8s_doc("Deployment", "scorewire")
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(uid)


def test_dockerfile_env_and_ports_are_what_the_server_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    # ENV sets real settings (binding all interfaces), and EXPOSE names their ports.
    settings = settings_from_env(dockerfile_env(), monkeypatch)
    assert settings.host == "0.0.0.0"
    exposed = {int(p) for args in instruction(final_stage(), "EXPOSE") for p in args.split()}
    assert exposed == {settings.port, settings.metrics_port} == {50051, 9464}


def test_dockerfile_copies_what_the_build_needs_and_the_context_sends_it() -> None:
    # Every COPY source exists, and the .dockerignore keeps it in the context.
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    allowed = [line[1:] for line in ignore if line.startswith("!")]
    copies = [args for stage in dockerfile_stages()[:-1] for args in instruction(stage, "COPY")]
    assert copies
    for args in copies:
        if args.startswith("--from="):
            continue  # from another stage, not the context
        *sources, _dest = args.split()
        for src in sources:
            assert (ROOT / src).exists(), src
            assert any(src == a or (a.endswith("/") and src.startswith(a)) for a in allowed), (
                f"{src} is not let through Dockerfile.dockerignore"
            )


async def run_healthcheck(port: int) -> int:
    """Run the image's HEALTHCHECK command (with this interpreter) against `port`."""
    command = healthcheck_command()
    assert command[0] == "python"
    env = {**os.environ, "SCOREWIRE_PORT": str(port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *command[1:],
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(proc.wait(), 30)


async def test_the_healthcheck_passes_on_a_serving_server_and_fails_otherwise(
    server: MetricsServer,
) -> None:
    # SERVING -> 0; NOT_SERVING (graceful shutdown) -> 1; nothing listening -> non-zero.
    assert await run_healthcheck(server.port) == 0
    await server.running.health.enter_graceful_shutdown()
    assert await run_healthcheck(server.port) == 1
    await server.close()
    assert await run_healthcheck(server.port) != 0


# --- Compose ------------------------------------------------------------------------------------


def interpolate(value: Any) -> str:
    """Compose's `${NAME:-default}` / `${NAME}` with an empty environment."""
    return re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", str(value))


def compose() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(doc, dict)
    return doc


def replica_env(name: str) -> dict[str, str]:
    env = compose()["services"][name]["environment"]
    return {k: interpolate(v) for k, v in env.items()}


def test_compose_runs_two_replicas_of_one_image() -> None:
    # Both replicas build deploy/Dockerfile from the repository root, with one config.
    services = compose()["services"]
    for name in REPLICAS:
        build = services[name]["build"]
        context = (COMPOSE.parent / build["context"]).resolve()
        assert context == ROOT
        assert (context / build["dockerfile"]).resolve() == DOCKERFILE
    assert replica_env(REPLICAS[0]) == replica_env(REPLICAS[1])


def test_compose_env_and_ports_are_what_the_server_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    # The settings parse; published and exposed container ports are the gRPC, metrics
    # and viewer ports those settings give; the viewer (no tokens set) is published on
    # the host's loopback only, since it shows every output scored.
    services = compose()["services"]
    host_ports = []
    for name in REPLICAS:
        settings = settings_from_env(replica_env(name), monkeypatch)
        assert settings.host == "0.0.0.0" and settings.metrics_enabled
        assert settings.viewer_host == "0.0.0.0" and settings.viewer_port is not None
        published = {}
        for spec in map(str, services[name]["ports"]):
            *bind, host, container = spec.split(":")
            published[int(container)] = bind
            host_ports.append(host)
        assert published == {settings.port: [], settings.viewer_port: ["127.0.0.1"]}
        assert not settings.auth_tokens and not settings.auth_token_sha256
        exposed = {int(p) for p in services[name]["expose"]}
        assert exposed == {settings.port, settings.metrics_port, settings.viewer_port}
    assert len(set(host_ports)) == len(host_ports), "each replica needs its own host ports"


def test_compose_replicas_share_the_redis_service(monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache URL names the Compose Redis service and the port it listens on.
    services = compose()["services"]
    settings = settings_from_env(replica_env(REPLICAS[0]), monkeypatch)
    url = urlsplit(settings.cache_url)
    assert url.scheme == "redis"
    assert url.hostname in services
    redis = services[url.hostname]
    assert str(url.port or 6379) in [str(p) for p in redis["expose"]]
    assert "--port" not in redis.get("command", []), "Redis listens on its default port"
    for name in REPLICAS:
        assert url.hostname in services[name]["depends_on"]


def test_compose_prometheus_scrapes_both_replicas_on_the_metrics_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The mounted prometheus.yml targets every replica at SCOREWIRE_METRICS_PORT, and the
    # alert rules are mounted where its rule_files look.
    prometheus = compose()["services"]["prometheus"]
    mounts = dict(mount_pairs(prometheus["volumes"]))
    config_flag = next(f for f in prometheus["command"] if f.startswith("--config.file="))
    config_path = config_flag.split("=", 1)[1]
    source = mounts[config_path]
    config = yaml.safe_load(source.read_text())
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "scorewire")
    targets = {t for sc in job["static_configs"] for t in sc["targets"]}
    metrics_port = settings_from_env(replica_env(REPLICAS[0]), monkeypatch).metrics_port
    assert targets == {f"{name}:{metrics_port}" for name in REPLICAS}
    for rule_file in config["rule_files"]:
        in_container = str(Path(config_path).parent / rule_file)
        assert in_container in mounts and mounts[in_container].exists()


def mount_pairs(volumes: list[str]) -> list[tuple[str, Path]]:
    """(container path, repository path) of the bind mounts (named volumes skipped)."""
    out = []
    for v in volumes:
        src, dest = v.split(":")[:2]
        if src.startswith("."):
            path = (COMPOSE.parent / src).resolve()
            assert path.exists(), f"{src} is mounted but does not exist"
            out.append((dest, path))
    return out


def test_compose_grafana_gets_the_datasource_and_dashboard() -> None:
    # The provisioning and dashboard mounts exist, the dashboard provider reads the
    # mounted folder, the datasource points at the Prometheus service and port, and the
    # home dashboard is the mounted JSON.
    services = compose()["services"]
    grafana = services["grafana"]
    mounts = dict(mount_pairs(grafana["volumes"]))
    provisioning = mounts["/etc/grafana/provisioning"]
    provider = yaml.safe_load((provisioning / "dashboards/scorewire.yml").read_text())
    folder = provider["providers"][0]["options"]["path"]
    assert mounts[folder] == DEPLOY / "grafana/dashboards"
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (mounts[folder] / Path(home).relative_to(folder)).is_file()
    datasource = yaml.safe_load((provisioning / "datasources/prometheus.yml").read_text())
    url = urlsplit(datasource["datasources"][0]["url"])
    assert url.hostname in services
    published = [str(p).split(":")[-1] for p in services[url.hostname]["ports"]]
    assert str(url.port) in published


# --- Kubernetes ---------------------------------------------------------------------------------


@functools.cache
def k8s_docs() -> list[dict[str, Any]]:
    """The kustomization rendered by `kubectl kustomize` when kubectl is installed, else
    its resources read directly with the namespace applied (read once: do not modify)."""
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        out = subprocess.run(
            [kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60, check=True
        ).stdout
        return [d for d in yaml.safe_load_all(out) if d]
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for resource in kustomization["resources"]:
        for doc in yaml.safe_load_all((K8S / resource).read_text()):
            if doc and doc["kind"] != "Namespace":
                doc["metadata"]["namespace"] = kustomization["namespace"]
            if doc:
                docs.append(doc)
    return docs


def k8s_doc(kind: str, name: str) -> dict[str, Any]:
    found = [d for d in k8s_docs() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}"
    return found[0]


def server_container() -> dict[str, Any]:
    spec = k8s_doc("Deployment", "scorewire")["spec"]["template"]["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == "scorewire"]
    return container


def configmap_settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    name = server_container()["envFrom"][0]["configMapRef"]["name"]
    return settings_from_env(k8s_doc("ConfigMap", name)["data"], monkeypatch)


def test_k8s_manifests_validate_against_the_kubernetes_schemas() -> None:
    # Strict schema validation (unknown fields rejected), offline, with kubernetes-validate.
    try:
        import kubernetes_validate
    except ImportError:
        require_component("kubernetes-validate", "not installed (a dev dependency: make install)")
    docs = k8s_docs()
    assert {d["kind"] for d in docs} >= {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "ConfigMap",
    }
    for doc in docs:
        kubernetes_validate.validate(doc, "1.30", strict=True)
    # The validator does reject a misspelt field.
    broken = json.loads(json.dumps(k8s_doc("Deployment", "scorewire")))
    broken["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.30", strict=True)


def test_k8s_configmap_is_what_the_server_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every key is a setting, they parse, the server binds all interfaces, and the cache
    # URL names the Redis Service and its port (so every replica shares it).
    settings = configmap_settings(monkeypatch)
    assert settings.host == "0.0.0.0" and settings.metrics_enabled and settings.workers == 1
    url = urlsplit(settings.cache_url)
    redis = k8s_doc("Service", url.hostname or "")
    assert (url.port or 6379) in [p["port"] for p in redis["spec"]["ports"]]
    for env in server_container().get("env", []):
        assert env["name"].removeprefix("SCOREWIRE_").lower() in Settings.model_fields


def test_k8s_ports_and_grpc_probes_match_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # Container ports are the configured ones; liveness and readiness are gRPC probes on
    # the gRPC port, readiness for the service name the server registers in health.
    settings = configmap_settings(monkeypatch)
    container = server_container()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {
        "grpc": settings.port,
        "metrics": settings.metrics_port,
        "viewer": settings.viewer_port,
    }
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == settings.port, probe
    assert container["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    pod = k8s_doc("Deployment", "scorewire")["spec"]["template"]
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == settings.metrics_port
    # Calls in flight get the server's grace period before the kubelet kills the pod.
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["spec"]["terminationGracePeriodSeconds"] > settings.grace_period_s + pre_stop


def _quantity(value: str) -> int:
    """A Kubernetes memory quantity (`1Gi`, `512Mi`, `1000000`) in bytes."""
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if value.endswith(suffix):
            return int(value.removesuffix(suffix)) * factor
    return int(value)


@pytest.mark.parametrize("node_cores", [2, 16, 96])
def test_k8s_pod_sizes_itself_inside_its_memory_limit_on_any_node(
    monkeypatch: pytest.MonkeyPatch, node_cores: int
) -> None:
    # The server reads the pod's limit from its cgroup: whatever the node's core count,
    # the serving process, the bytes in flight and every worker at its memory bound fit
    # in the container's memory limit. The ConfigMap's replica count is the Deployment's.
    from scorewire.core.cgroup import Limits
    from scorewire.scoring.sizing import SERVING_BASE, fit

    settings = configmap_settings(monkeypatch)
    assert settings.replicas == k8s_doc("Deployment", "scorewire")["spec"]["replicas"]
    limit = _quantity(server_container()["resources"]["limits"]["memory"])
    sized = fit(settings, Limits(cpus=node_cores, quota=None, memory=limit, version="v2"))
    workers = sized.scoring_workers or 0
    assert 1 <= workers <= node_cores
    held = SERVING_BASE + sized.max_bytes_in_flight
    held += workers * (sized.scoring_worker_max_rss_mb << 20)
    assert held <= limit * settings.workers


async def test_k8s_probes_get_serving_from_a_real_server(server: MetricsServer) -> None:
    # What the probes ask (overall health and the readiness service) the server answers.
    container = server_container()
    stub = health_pb2_grpc.HealthStub(server.channel)
    for probe in ("livenessProbe", "readinessProbe"):
        service = container[probe]["grpc"].get("service", "")
        resp = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert resp.status == health_pb2.HealthCheckResponse.SERVING, probe


def test_k8s_services_select_the_pods_and_name_real_ports() -> None:
    # Both Services select the Deployment's pods and target its named ports; the
    # headless one has no cluster IP (DNS returns every pod, for round-robin clients).
    pod = k8s_doc("Deployment", "scorewire")["spec"]["template"]
    labels = pod["metadata"]["labels"]
    port_names = {p["name"] for p in server_container()["ports"]}
    regular, headless = k8s_doc("Service", "scorewire"), k8s_doc("Service", "scorewire-headless")
    for svc in (regular, headless):
        assert svc["spec"]["selector"].items() <= labels.items()
        for port in svc["spec"]["ports"]:
            assert port["targetPort"] in port_names
    assert headless["spec"]["clusterIP"] == "None"
    assert regular["spec"].get("clusterIP") != "None"
    assert {p["name"] for p in headless["spec"]["ports"]} == {"grpc"}
    deployment = k8s_doc("Deployment", "scorewire")
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_k8s_hpa_and_pdb_cover_the_deployment() -> None:
    # The HPA scales this Deployment from at least two replicas; the PDB selects its pods
    # and always allows a disruption (minAvailable below the minimum replica count).
    deployment = k8s_doc("Deployment", "scorewire")
    hpa = k8s_doc("HorizontalPodAutoscaler", "scorewire")["spec"]
    target = hpa["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "scorewire")
    assert hpa["minReplicas"] >= 2 and hpa["maxReplicas"] > hpa["minReplicas"]
    pdb = k8s_doc("PodDisruptionBudget", "scorewire")["spec"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["minAvailable"] < hpa["minReplicas"]


def test_k8s_redis_service_reaches_the_redis_pods() -> None:
    # The Redis Service selects the Redis Deployment's pods on the port Redis listens on.
    redis = k8s_doc("Deployment", "redis")["spec"]
    svc = k8s_doc("Service", "redis")["spec"]
    assert svc["selector"].items() <= redis["template"]["metadata"]["labels"].items()
    (container,) = redis["template"]["spec"]["containers"]
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert [named[p["targetPort"]] for p in svc["ports"]] == [6379]


def test_every_k8s_resource_lands_in_one_namespace() -> None:
    # kustomize puts every namespaced resource in the scorewire namespace.
    docs = k8s_docs()
    namespaces = {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"}
    assert namespaces == {"scorewire"}


# --- the state directory and the label store ----------------------------------------------


def image_state_dir(monkeypatch: pytest.MonkeyPatch) -> Path:
    return settings_from_env(dockerfile_env(), monkeypatch).state_path()


def test_dockerfile_state_dir_is_a_volume_the_server_user_owns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The image's SCOREWIRE_STATE_DIR is absolute, declared a VOLUME, and created owned by
    # the USER, so the server can write it on an otherwise read-only root.
    state = image_state_dir(monkeypatch)
    assert state == Path(dockerfile_env()["SCOREWIRE_STATE_DIR"])
    volumes = [v for args in instruction(final_stage(), "VOLUME") for v in json.loads(args)]
    assert str(state) in volumes
    (user,) = instruction(final_stage(), "USER")
    uid, _, gid = user.partition(":")
    made = [r for r in instruction(final_stage(), "RUN") if str(state) in r]
    assert made and f"-o {uid}" in made[0] and f"-g {gid or uid}" in made[0]


def test_compose_replicas_keep_labels_and_runs_in_one_postgresql_and_state_in_own_volumes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two replicas: SQLite per replica would make `human` checks, the viewer and baseline
    # gates depend on which one answers, so both stores' URLs name the Compose PostgreSQL
    # service (one database), and each replica's state directory is its own named volume.
    doc = compose()
    services, state = doc["services"], image_state_dir(monkeypatch)
    mounted = []
    for name in REPLICAS:
        settings = settings_from_env(replica_env(name), monkeypatch)
        url, runs = settings.labels_url, settings.runs_url
        assert url is not None and runs is not None
        assert runs.get_secret_value() == url.get_secret_value()
        assert settings.replicas == len(REPLICAS)
        parts = urlsplit(url.get_secret_value())
        assert parts.hostname in services and parts.hostname in services[name]["depends_on"]
        assert services[parts.hostname]["image"].startswith("postgres:")
        volume, _, target = services[name]["volumes"][0].partition(":")
        assert target == str(state) and volume in doc["volumes"]
        mounted.append(volume)
    assert len(set(mounted)) == len(REPLICAS)


def test_k8s_replicas_keep_labels_and_runs_in_postgresql_and_mount_the_state_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # More than one replica (the Deployment and the HPA minimum): the database URL (both
    # stores) comes from a required Secret, and no store overrides it with a URL of
    # its own; the image's state directory is a mounted volume.
    deployment = k8s_doc("Deployment", "scorewire")
    hpa = next(d for d in k8s_docs() if d["kind"] == "HorizontalPodAutoscaler")
    assert deployment["spec"]["replicas"] > 1 and hpa["spec"]["minReplicas"] > 1
    container = server_container()
    env = {e["name"]: e for e in container["env"]}
    secret = env["SCOREWIRE_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert "SCOREWIRE_LABELS_URL" not in env and "SCOREWIRE_RUNS_URL" not in env
    assert not secret.get("optional", False)
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert mounts[str(image_state_dir(monkeypatch))] in volumes
