"""The checks of deploy/ that need a program rather than a validator's command line.

deploy/check runs this inside its virtual environment (PyYAML, kubernetes-validate and crossplane
come from there). Each subcommand prints one line per finding and exits 1 if anything is wrong:

  k8s FILE NAME      Kubernetes manifests rendered by `helm template`: every object against the
                     bundled JSON schema of one Kubernetes version (strict: unknown fields are
                     errors), then what a schema cannot see: selectors that find the pods,
                     references to Secrets and ConfigMaps that exist when the pod starts (hooks
                     included), probes and ports, the drain fitting in the grace period, and
                     workmate configuration keys that workmate knows.
  compose FILE       deploy/compose.yaml: configuration keys, replica ids, start order, the drain
                     fitting in stop_grace_period, and the proxy's upstreams naming the replicas.
  nginx FILE         an nginx configuration: directives, their contexts and argument counts.

Configuration keys are read from the server's source (crates/server/src/config/keys.rs), so a
deploy file cannot name a key workmate would refuse at start.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
KEYS_RS = ROOT / "crates/server/src/config/keys.rs"
# Read by workmate from the environment but not configuration keys (the vault's master keys).
PLAIN_ENV = {"WORKMATE_VAULT_KEY", "WORKMATE_VAULT_PREVIOUS_KEYS"}
# [server] shutdown_grace_ms when nothing sets it, read from the source like the keys.
VALIDATE_RS = ROOT / "crates/server/src/config/validate.rs"

problems: list[str] = []


def problem(text: str) -> None:
    problems.append(text)
    print(f"  FAIL {text}")


def note(text: str) -> None:
    print(f"  {text}")


# --- configuration keys ----------------------------------------------------------------------


def known_keys() -> list[tuple[str, str]]:
    """(section, key) pairs of KNOWN_KEYS; `*` stands for any name, as in the source."""
    text = KEYS_RS.read_text(encoding="utf-8")
    pairs = re.findall(r'Key::(?:new|flagged)\(\s*"([^"]+)",\s*"([^"]+)"', text)
    if len(pairs) < 20:
        raise SystemExit(f"found only {len(pairs)} keys in {KEYS_RS}: has its format changed?")
    return pairs


def _section_matches(declared: str, actual: str) -> bool:
    d, a = declared.split("."), actual.split(".")
    return len(d) == len(a) and all(
        x == y or (x == "*" and re.fullmatch(r"[a-z0-9_-]+", y)) for x, y in zip(d, a)
    )


def key_known(section: str, key: str) -> bool:
    return any(
        _section_matches(s, section) and (k == "*" or k == key) for s, k in KNOWN_KEYS
    )


def env_known(name: str) -> bool:
    """Whether workmate reads this variable (the rule of crates/server/src/config/layers.rs)."""
    if name in PLAIN_ENV:
        return True
    if not name.startswith("WORKMATE__"):
        return True  # not workmate's: another program's variable, or the gateway key it names
    parts = name[len("WORKMATE__") :].lower().split("__")
    return len(parts) >= 2 and key_known(".".join(parts[:-1]), parts[-1])


def toml_keys(table: dict, prefix: str = "") -> list[tuple[str, str]]:
    """(section, key) of every value in a parsed workmate.toml."""
    out = []
    for name, value in table.items():
        if isinstance(value, dict):
            out += toml_keys(value, f"{prefix}.{name}" if prefix else name)
        else:
            out.append((prefix, name))
    return out


def check_toml(text: str, where: str) -> dict:
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        problem(f"{where}: workmate.toml is not TOML: {e}")
        return {}
    unknown = [f"[{s}] {k}" for s, k in toml_keys(config) if not key_known(s, k)]
    if unknown:
        problem(f"{where}: workmate.toml has keys workmate does not know: {', '.join(unknown)}")
    else:
        note(f"{where}: workmate.toml: {len(toml_keys(config))} keys, all known")
    return config


def check_env_names(names: list[str], where: str) -> None:
    unknown = sorted(n for n in names if not env_known(n))
    if unknown:
        problem(f"{where}: variables that name no configuration key: {', '.join(unknown)}")


def default_grace_ms() -> int:
    found = re.search(
        r"DEFAULT_SHUTDOWN_GRACE_MS:\s*i64\s*=\s*([0-9_]+)", VALIDATE_RS.read_text("utf-8")
    )
    if not found:
        raise SystemExit(f"no DEFAULT_SHUTDOWN_GRACE_MS in {VALIDATE_RS}")
    return int(found.group(1).replace("_", ""))


# --- Kubernetes --------------------------------------------------------------------------------


def hook_of(obj: dict) -> tuple[set[str], int] | None:
    notes = (obj.get("metadata") or {}).get("annotations") or {}
    if "helm.sh/hook" not in notes:
        return None
    events = {e.strip() for e in notes["helm.sh/hook"].split(",")}
    return events, int(notes.get("helm.sh/hook-weight", "0"))


def matches(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_refs(pod: dict) -> set[tuple[str, str]]:
    """(kind, name) of every Secret and ConfigMap a pod spec needs, optional ones left out."""
    refs = set()
    containers = (pod.get("initContainers") or []) + (pod.get("containers") or [])
    for c in containers:
        for e in c.get("env") or []:
            source = e.get("valueFrom") or {}
            for field, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                ref = source.get(field)
                if ref and not ref.get("optional"):
                    refs.add((kind, ref["name"]))
        for e in c.get("envFrom") or []:
            for field, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                ref = e.get(field)
                if ref and not ref.get("optional"):
                    refs.add((kind, ref["name"]))
    for v in pod.get("volumes") or []:
        if "secret" in v and not v["secret"].get("optional"):
            refs.add(("Secret", v["secret"]["secretName"]))
        if "configMap" in v and not v["configMap"].get("optional"):
            refs.add(("ConfigMap", v["configMap"]["name"]))
    return refs


def check_k8s(path: Path, name: str, version: str, external: set[str]) -> None:
    import kubernetes_validate as kv

    docs = [d for d in yaml.safe_load_all(path.read_text("utf-8")) if d]
    print(f"{name}: {len(docs)} objects, against Kubernetes {version} (strict)")
    objects: dict[tuple[str, str], dict] = {}
    for d in docs:
        kind, obj_name = d.get("kind"), (d.get("metadata") or {}).get("name")
        objects[(kind, obj_name)] = d
        if d.get("apiVersion", "").startswith("monitoring.coreos.com/"):
            note(
                f"{kind}/{obj_name}: schema check skipped: {d['apiVersion']} is a Prometheus "
                "Operator CRD, and no schema of it is bundled (its selector and port are "
                "checked below)"
            )
            continue
        try:
            kv.validate(d, version, strict=True)
            note(f"{kind}/{obj_name}: valid")
        except kv.ValidationError as e:
            problem(f"{kind}/{obj_name}: {str(e).splitlines()[0]}")
        except kv.SchemaNotFoundError:
            problem(f"{kind}/{obj_name}: no schema for {d.get('apiVersion')} in {version}")

    def of_kind(kind: str) -> list[dict]:
        return [d for (k, _), d in objects.items() if k == kind]

    deployments, services = of_kind("Deployment"), of_kind("Service")
    if len(deployments) != 1 or len(services) != 1:
        problem(f"expected one Deployment and one Service, found {len(deployments)} and {len(services)}")
        return
    deploy, service = deployments[0], services[0]
    pod_labels = deploy["spec"]["template"]["metadata"]["labels"]
    pod = deploy["spec"]["template"]["spec"]
    container = next(c for c in pod["containers"] if c["name"] == "workmate")

    # Selectors.
    if not matches(deploy["spec"]["selector"]["matchLabels"], pod_labels):
        problem("the Deployment's selector does not match its own pods")
    if not matches(service["spec"]["selector"], pod_labels):
        problem("the Service's selector does not find the workmate pods")
    for pdb in of_kind("PodDisruptionBudget"):
        if not matches(pdb["spec"]["selector"]["matchLabels"], pod_labels):
            problem("the PodDisruptionBudget does not select the workmate pods")
    for job in of_kind("Job"):
        job_labels = job["spec"]["template"]["metadata"].get("labels") or {}
        if matches(service["spec"]["selector"], job_labels):
            problem(f"Job/{job['metadata']['name']}'s pod would receive the Service's traffic")
        for pdb in of_kind("PodDisruptionBudget"):
            if matches(pdb["spec"]["selector"]["matchLabels"], job_labels):
                problem(f"Job/{job['metadata']['name']}'s pod would count in the budget")

    # Ports and probes.
    port_names = {p["name"]: p["containerPort"] for p in container.get("ports") or []}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        http = (container.get(probe) or {}).get("httpGet") or {}
        if http.get("port") not in port_names:
            problem(f"{probe} probes port {http.get('port')!r}, not a port of the container")
    expected = {"livenessProbe": "/healthz", "readinessProbe": "/readyz"}
    for probe, route in expected.items():
        if ((container.get(probe) or {}).get("httpGet") or {}).get("path") != route:
            problem(f"{probe} does not probe {route}")
    if port_names.get("http") != 8080:
        problem("the container's http port is not 8080, where the image listens")
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    for p in service["spec"]["ports"]:
        if p.get("targetPort") not in port_names:
            problem(f"Service port {p['name']} targets {p.get('targetPort')!r}, not a container port")
    for sm in of_kind("ServiceMonitor"):
        if not matches(sm["spec"]["selector"]["matchLabels"], service["metadata"]["labels"]):
            problem("the ServiceMonitor's selector does not find the Service")
        for ep in sm["spec"]["endpoints"]:
            if ep.get("port") not in service_ports or ep.get("path") != "/metrics":
                problem(f"ServiceMonitor endpoint {ep} is not the Service's /metrics")
        if sm["spec"].get("jobLabel") not in service["metadata"]["labels"]:
            problem("the ServiceMonitor's jobLabel is not a label of the Service")
    for ing in of_kind("Ingress"):
        for rule in ing["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                backend = p["backend"]["service"]
                if backend["name"] != service["metadata"]["name"] or backend["port"].get("name") not in service_ports:
                    problem(f"Ingress path {p['path']} points at {backend}, not the Service")
    for hpa in of_kind("HorizontalPodAutoscaler"):
        if hpa["spec"]["scaleTargetRef"]["name"] != deploy["metadata"]["name"]:
            problem("the HorizontalPodAutoscaler scales another Deployment")
        if "replicas" in deploy["spec"]:
            problem("the Deployment sets replicas although an autoscaler owns them")

    # References: what a pod needs must exist when it starts. A hook's pod starts before the
    # release's own objects exist, so it may only use hooks of the same events with a lower
    # weight; the release's pods may not use hooks (they are deleted after succeeding).
    def available_for(needer: dict) -> set[tuple[str, str]]:
        hook = hook_of(needer)
        out = set()
        for key, d in objects.items():
            other = hook_of(d)
            if hook is None and other is None:
                out.add(key)
            elif hook and other and hook[0] <= other[0] and other[1] < hook[1]:
                out.add(key)
        return out

    for needer in deployments + of_kind("Job"):
        spec = needer["spec"]["template"]["spec"]
        have = available_for(needer)
        for kind, ref in sorted(pod_refs(spec)):
            if (kind, ref) not in have and ref not in external:
                problem(f"{needer['kind']}/{needer['metadata']['name']} needs {kind} {ref}, which does not exist when it starts")
        account = spec.get("serviceAccountName")
        if account and ("ServiceAccount", account) not in have and account not in external:
            problem(f"{needer['kind']}/{needer['metadata']['name']} runs as ServiceAccount {account}, which does not exist when it starts")

    # workmate's own configuration: the mounted file and the environment.
    config_maps = {
        d["metadata"]["name"]: d.get("data") or {}
        for d in of_kind("ConfigMap")
    }
    grace_ms = default_grace_ms()
    for cm_name, data in config_maps.items():
        if "workmate.toml" in data:
            config = check_toml(data["workmate.toml"], f"ConfigMap/{cm_name}")
            if not hook_of(objects[("ConfigMap", cm_name)]):
                grace_ms = (config.get("server") or {}).get("shutdown_grace_ms", grace_ms)
        else:
            # An env ConfigMap: its keys are variable names.
            check_env_names(list(data), f"ConfigMap/{cm_name}")
    for needer in deployments + of_kind("Job"):
        for c in needer["spec"]["template"]["spec"]["containers"]:
            check_env_names([e["name"] for e in c.get("env") or []], f"{needer['kind']}/{needer['metadata']['name']}")
    names = {e["name"]: e for e in container.get("env") or []}
    if (names.get("WORKMATE__SERVER__REPLICA_ID") or {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "metadata.name":
        problem("the replicas do not take [server] replica_id from the pod's name")
    sandbox_off = (names.get("WORKMATE__TOOLS__SHELL_SANDBOX") or {}).get("value") == "none"
    seccomp = ((container.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    note(f"shell sandbox: {'OFF (shell_sandbox = none)' if sandbox_off else 'on'}; seccomp {seccomp}")
    grace_s = pod.get("terminationGracePeriodSeconds", 30)
    if grace_s * 1000 <= grace_ms:
        problem(f"terminationGracePeriodSeconds {grace_s} s does not exceed shutdown_grace_ms {grace_ms} ms")
    else:
        note(f"drain {grace_ms} ms fits in terminationGracePeriodSeconds {grace_s} s")


# --- Compose -----------------------------------------------------------------------------------


def seconds(duration: str) -> float:
    total = 0.0
    for amount, unit in re.findall(r"([0-9.]+)(ms|s|m|h)", duration):
        total += float(amount) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total


def check_compose(path: Path) -> None:
    import crossplane

    print(f"{path.name}: configuration keys, start order, drain and proxy")
    compose = yaml.safe_load(path.read_text("utf-8"))
    services = compose["services"]
    workmates = {n: s for n, s in services.items() if s.get("image") == "workmate:local"}
    replicas = {n: s for n, s in workmates.items() if s.get("command") == ["serve"]}
    if len(replicas) < 2:
        problem(f"expected two or more serving replicas, found {sorted(replicas)}")
    ids = {}
    default_ms = default_grace_ms()
    for name, svc in workmates.items():
        env = svc.get("environment") or {}
        check_env_names(list(env), f"service {name}")
        if name in replicas:
            ids[name] = env.get("WORKMATE__SERVER__REPLICA_ID")
            deps = svc.get("depends_on") or {}
            if (deps.get("migrate") or {}).get("condition") != "service_completed_successfully":
                problem(f"{name} does not wait for the migration to complete")
            grace_ms = int(env.get("WORKMATE__SERVER__SHUTDOWN_GRACE_MS", default_ms))
            stop = seconds(str(svc.get("stop_grace_period", "10s")))
            if stop * 1000 <= grace_ms:
                problem(f"{name}: stop_grace_period {stop} s does not exceed the drain {grace_ms} ms")
            else:
                note(f"{name}: drain {grace_ms} ms fits in stop_grace_period {stop:g} s")
    if None in ids.values() or len(set(ids.values())) != len(ids):
        problem(f"replica ids are missing or not distinct: {ids}")
    else:
        note(f"replica ids distinct: {', '.join(sorted(ids.values()))}")

    # The proxy's upstream servers must be exactly the replicas, on their port.
    proxy = services.get("proxy") or {}
    mounts = [v for v in proxy.get("volumes") or [] if str(v).endswith("/etc/nginx/nginx.conf:ro")]
    if not mounts:
        problem("the proxy does not mount an nginx.conf")
        return
    conf = (path.parent / str(mounts[0]).split(":")[0]).resolve()
    parsed = crossplane.parse(str(conf), single=True, strict=True)
    servers = set()

    def walk(block: list) -> None:
        for d in block:
            if d["directive"] == "upstream":
                servers.update(c["args"][0] for c in d.get("block", []) if c["directive"] == "server")
            walk(d.get("block", []))

    for f in parsed["config"]:
        walk(f["parsed"])
    expected = {f"{n}:8080" for n in replicas}
    if servers != expected:
        problem(f"nginx upstream servers {sorted(servers)} are not the replicas {sorted(expected)}")
    else:
        note(f"proxy balances {', '.join(sorted(servers))}")


def check_nginx(path: Path) -> None:
    import crossplane

    parsed = crossplane.parse(str(path), single=True, strict=True, check_ctx=True, check_args=True)
    if parsed["status"] != "ok":
        for e in parsed["errors"]:
            problem(f"{path.name}: {e['error']}")
    else:
        note(f"{path.name}: every directive known, in its context, with its arguments")


KNOWN_KEYS = known_keys()


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "k8s":
        version = "1.31.0"
        external: set[str] = set()
        rest = argv[3:]
        while rest:
            flag, value, rest = rest[0], rest[1], rest[2:]
            if flag == "--kubernetes":
                version = value
            elif flag == "--external":
                external.add(value)
            else:
                raise SystemExit(f"unknown flag {flag}")
        check_k8s(Path(argv[1]), argv[2], version, external)
    elif len(argv) == 2 and argv[0] == "compose":
        check_compose(Path(argv[1]))
    elif len(argv) == 2 and argv[0] == "nginx":
        check_nginx(Path(argv[1]))
    else:
        raise SystemExit(__doc__)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
