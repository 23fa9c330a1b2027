"""Where ``--slowdown`` may make cgroups (tools/connectx_forge/sandbox/cgroup.py), found in hierarchies laid out in a
folder:
the kernel's own rules are tried by the share tests of test_slowdown.py on whichever hierarchy this machine has."""

from __future__ import annotations

from pathlib import Path

from connectx_forge.sandbox import cgroup, jail


def tree(root: Path, controls: dict[str, str]) -> None:
    """Folders under ``root``, each with the ``cgroup.subtree_control`` given ("" is ``root`` itself)."""
    for path, control in controls.items():
        folder = root / path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cgroup.subtree_control").write_text(control + "\n")


def v2(point: Path, root: str = "/") -> cgroup.Mount:
    return cgroup.Mount(str(point), root, 2, frozenset({"rw", "nsdelegate"}))


def test_v2_takes_the_nearest_cgroup_that_hands_cpu_to_its_children(tmp_path: Path) -> None:
    # a v2 cgroup with processes may not hand controllers on, so the harness's own rarely does
    tree(tmp_path, {"": "cpuset cpu io memory pids", "user.slice": "memory pids", "user.slice/s.scope": ""})
    everything = ("cpu", "memory", "pids")
    assert cgroup.candidates([v2(tmp_path)], {"": "/user.slice/s.scope"}) == [
        cgroup.Group(str(tmp_path), 2, everything)]
    # memory and pids are handed nearer: those are held there; cpu only at the root
    assert cgroup.candidates([v2(tmp_path)], {"": "/user.slice/s.scope"}, "memory") == [
        cgroup.Group(str(tmp_path / "user.slice"), 2, ("memory", "pids")), cgroup.Group(str(tmp_path), 2, everything)]
    tree(tmp_path, {"user.slice": "cpu memory"})
    assert cgroup.candidates([v2(tmp_path)], {"": "/user.slice/s.scope"}) == [
        cgroup.Group(str(tmp_path / "user.slice"), 2, ("cpu", "memory")), cgroup.Group(str(tmp_path), 2, everything)]


def test_v2_without_cpu_anywhere_has_no_candidate(tmp_path: Path) -> None:
    tree(tmp_path, {"": "memory pids", "a": ""})
    assert cgroup.candidates([v2(tmp_path)], {"": "/a"}) == []


def test_a_mounted_subtree_is_read_from_its_own_root(tmp_path: Path) -> None:
    # a container shown only its own cgroup /docker/c1 at the mount point, while /proc/self/cgroup names it whole
    tree(tmp_path, {"": "cpu", "inner": ""})
    mount = v2(tmp_path, "/docker/c1")
    assert cgroup.candidates([mount], {"": "/docker/c1/inner"}) == [cgroup.Group(str(tmp_path), 2)]
    assert cgroup.candidates([mount], {"": "/elsewhere"}) == []  # outside what is mounted: nothing to write


def test_v1_takes_the_own_cgroup_of_the_cpu_hierarchy(tmp_path: Path) -> None:
    cpu = cgroup.Mount(str(tmp_path / "cpu,cpuacct"), "/", 1, frozenset({"rw", "cpu", "cpuacct"}))
    memory = cgroup.Mount(str(tmp_path / "memory"), "/", 1, frozenset({"rw", "memory"}))
    own = {"cpu": "/user.slice", "cpuacct": "/user.slice", "memory": "/user.slice"}
    assert cgroup.candidates([memory, cpu], own) == [cgroup.Group(str(tmp_path / "cpu,cpuacct" / "user.slice"), 1)]
    # each v1 controller has its own hierarchy, and so its own folder
    assert cgroup.candidates([memory, cpu], own, "memory") == [
        cgroup.Group(str(tmp_path / "memory" / "user.slice"), 1, ("memory",))]
    assert cgroup.candidates([memory, cpu], own, "pids") == []


def test_a_v2_wardens_cgroup_hands_cpu_to_its_hosts(tmp_path: Path) -> None:
    made = cgroup._child(cgroup.Group(str(tmp_path), 2), "cxforge-warden-1-")
    assert (Path(made.folder) / "cgroup.subtree_control").read_text() == "+cpu"
    both = cgroup._child(cgroup.Group(str(tmp_path), 2, ("memory", "pids")), "cxforge-warden-3-")
    assert (Path(both.folder) / "cgroup.subtree_control").read_text() == "+memory +pids"
    v1 = cgroup._child(cgroup.Group(str(tmp_path), 1), "cxforge-warden-2-")
    assert not (Path(v1.folder) / "cgroup.subtree_control").exists()  # v1 has no such rule


def test_cgroup_paths_of_this_machine_parse() -> None:
    mounts = cgroup._mounts()
    assert all(m.version in (1, 2) and m.point.startswith("/") and m.root.startswith("/") for m in mounts)
    assert all(g.folder.startswith("/") for g in cgroup.candidates(mounts, cgroup._own_paths()))


def test_a_jail_keeps_the_cgroup_namespace_where_its_hosts_cgroups_lie_outside_its_own(tmp_path: Path) -> None:
    # v2 forbids a namespace to move processes out of its own cgroup: the jail opens none where that is needed
    own = {"": "/user.slice/s.scope"}
    ancestor, inside = cgroup.Group(str(tmp_path / "user.slice" / "w"), 2), \
        cgroup.Group(str(tmp_path / "user.slice" / "s.scope" / "w"), 2)
    assert not cgroup.in_own(ancestor, [v2(tmp_path)], own)
    assert cgroup.in_own(inside, [v2(tmp_path)], own)
    assert cgroup.in_own(cgroup.Group(str(tmp_path / "w"), 1), [], {})  # v1: no such rule
    assert "--unshare-cgroup-try" in jail.arguments(None, (), True)
    kept = jail.arguments(None, (), False)
    # as root the jail opens no user namespace (its warden gives each host a uid of its own): every other one
    assert "--unshare-cgroup-try" not in kept and all(arg in kept for arg in jail.UNSHARE[1:])


def test_a_wardens_groups_pass_to_the_jail_as_one_word() -> None:
    groups = (cgroup.Group("/sys/fs/cgroup/cpu,cpuacct/a b", 1, ("cpu",)),
              cgroup.Group("/sys/fs/cgroup/memory/x", 1, ("memory",)))
    assert cgroup.from_arg(cgroup.to_arg(groups)) == groups
    assert cgroup.from_arg(cgroup.to_arg(())) == ()
    assert cgroup.from_arg("-") == () and cgroup.from_arg('[["/x", 3, ["cpu"]]]') == ()
    assert cgroup.holding(groups, "memory") == groups[1] and cgroup.holding(groups, "pids") is None
