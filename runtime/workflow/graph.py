"""The workflow graph: edges, routes, and the edge shorthand (chains, fan-out tuples, routing maps)."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base_node import START, BaseNode
from .errors import GraphValidationError, WorkflowConfigurationError

log = logging.getLogger(__name__)

DEFAULT_ROUTE = "__DEFAULT__"
"""The route of an edge followed when none of its source's other routed edges matched."""

RouteValue = bool | int | str


class Edge(BaseModel):
    """An edge ``from_node -> to_node``, followed always (``route`` None) or when the source emitted one of
    ``route``'s values."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    from_node: Any
    to_node: Any
    route: RouteValue | list[RouteValue] | None = Field(default=None)


class Graph(BaseModel):
    """Nodes (taken from the edges, in order of appearance) and edges, validated."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    nodes: list[Any] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)

    def model_post_init(self, context: Any) -> None:
        if "nodes" in self.model_fields_set and self.nodes:
            raise WorkflowConfigurationError("Nodes are inferred from edges, do not set nodes explicitly.")
        self.nodes = list({id(node): node for edge in self.edges for node in (edge.from_node, edge.to_node)}
                          .values())

    @classmethod
    def from_edge_items(cls, items: list[Any]) -> Graph:
        """A graph from ``Workflow(edges=[...])``: Edge objects and chains."""
        return cls(edges=parse_edge_items(items))

    def node(self, name: str) -> BaseNode:
        """The node called ``name``."""
        return self._by_name[name]

    def successors(self, name: str, routes: Any) -> list[str]:
        """The nodes a completed ``name`` triggers, given the route(s) it emitted (None: no route).

        Unrouted edges are always followed; routed ones when a route matches; DEFAULT_ROUTE edges only when
        no routed edge matched."""
        chosen, defaults, matched, routed = [], [], False, False
        emitted = set(routes) if isinstance(routes, list) else {routes}
        for edge in self._out[name]:
            if edge.route is None:
                chosen.append(edge.to_node.name)
                continue
            routed = True
            if edge.route == DEFAULT_ROUTE:
                defaults.append(edge.to_node.name)
                continue
            wanted = set(edge.route) if isinstance(edge.route, list) else {edge.route}
            if wanted & emitted:
                chosen.append(edge.to_node.name)
                matched = True
        if not matched:
            chosen.extend(defaults)
        if routed and not chosen:
            log.warning("Node %r has conditional/DEFAULT edges but none were matched by the emitted route(s): "
                        "%r. The branch will end.", name, routes)
        return chosen

    def predecessors(self, name: str) -> list[str]:
        """The names of the nodes with an edge into ``name``, in edge order."""
        return list(dict.fromkeys(edge.from_node.name for edge in self.edges if edge.to_node.name == name))

    def is_terminal(self, name: str) -> bool:
        """True for a node with no outgoing edge: its output is the workflow's."""
        return not self._out[name]

    def validate_graph(self) -> None:
        """Check the graph and index it; GraphValidationError says what is wrong."""
        names = [node.name for node in self.nodes]
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise GraphValidationError(
                f"Graph validation failed. Duplicate node names found: {duplicates}. This means multiple distinct "
                "node objects have the same name. If you intended to reuse the same node, ensure you pass the "
                "exact same object instance. If you intended to have distinct nodes, ensure they have unique names.")
        if START not in self.nodes:
            raise GraphValidationError(
                f"Graph validation failed. START node (name: '{START.name}') not found in graph nodes.")
        seen = set()
        for edge in self.edges:
            key = (edge.from_node.name, edge.to_node.name, repr(edge.route))
            if key in seen:
                raise GraphValidationError(f"Graph validation failed. Duplicate edge found: "
                                           f"from={edge.from_node.name}, to={edge.to_node.name}")
            seen.add(key)
            if edge.to_node is START:
                raise GraphValidationError("Graph validation failed. START node must not have incoming edges.")
            if edge.from_node is START and edge.route is not None:
                raise GraphValidationError(f"Graph validation failed. Edges from START must not have routes "
                                           f"(edge to {edge.to_node.name} has route {edge.route}).")
            if isinstance(edge.route, list) and DEFAULT_ROUTE in edge.route and len(edge.route) > 1:
                raise GraphValidationError(
                    "Graph validation failed. DEFAULT_ROUTE cannot be combined with other routes in a list "
                    f"(edge from={edge.from_node.name}, to={edge.to_node.name}).")
        self._by_name = {node.name: node for node in self.nodes}
        self._out = {node.name: [e for e in self.edges if e.from_node is node] for node in self.nodes}
        reachable, stack = set(), [START.name]
        while stack:
            name = stack.pop()
            if name not in reachable:
                reachable.add(name)
                stack.extend(edge.to_node.name for edge in self._out[name])
        unreachable = sorted(set(names) - reachable)
        if unreachable:
            raise GraphValidationError(
                f"Graph validation failed. The following nodes are unreachable from START: {unreachable}")
        self._check_unconditional_cycles()

    def _check_unconditional_cycles(self) -> None:
        unconditional = {node.name: [e.to_node.name for e in self._out[node.name] if e.route is None]
                         for node in self.nodes}
        done: set[str] = set()

        def visit(name: str, trail: list[str]) -> None:
            if name in trail:
                cycle = [*trail[trail.index(name):], name]
                raise GraphValidationError(
                    f"Graph validation failed. Unconditional cycle detected: {' -> '.join(cycle)}. Cycles must "
                    "include at least one conditional (routed) edge to avoid infinite loops.")
            if name in done:
                return
            for successor in unconditional[name]:
                visit(successor, [*trail, name])
            done.add(name)

        for name in unconditional:
            visit(name, [])


def parse_edge_items(items: list[Any]) -> list[Edge]:
    """Edges from ADK's shorthand: an Edge, or a chain tuple whose elements are a node-like, a tuple of
    node-likes (fan-out, then fan-in) or a routing map ``{route: node-like or tuple}``."""
    from .build import build_node

    built: dict[int, BaseNode] = {}

    def node_of(node_like: Any) -> BaseNode:
        if node_like == "START" or node_like is START:
            return START
        key = id(node_like)
        if key not in built:
            built[key] = build_node(node_like)
        return built[key]

    def flatten(element: Any) -> list[Any]:
        if isinstance(element, dict):
            return [n for target in element.values() for n in (target if isinstance(target, tuple) else (target,))]
        return list(element) if isinstance(element, tuple) else [element]

    edges: list[Edge] = []
    for item in items:
        if isinstance(item, Edge):
            edges.append(Edge(from_node=node_of(item.from_node), to_node=node_of(item.to_node), route=item.route))
            continue
        if not isinstance(item, tuple) or len(item) < 2:
            raise WorkflowConfigurationError(
                f"Invalid edge item {item!r}: use an Edge or a tuple of at least two chain elements.")
        for source, target in zip(item, item[1:], strict=False):
            if isinstance(target, dict):
                if isinstance(source, dict):
                    raise WorkflowConfigurationError("Consecutive routing maps are not allowed in a chain. "
                                                     "Split them into separate edge items.")
                if not target:
                    raise WorkflowConfigurationError(
                        "Routing map must not be empty. Provide at least one route -> node mapping.")
                for route, destination in target.items():
                    if not isinstance(route, bool | int | str):
                        raise WorkflowConfigurationError(
                            f"Invalid routing map key: {route!r} (type {type(route).__name__}). Keys must be "
                            "RouteValue (str, int, or bool).")
                    for from_like in flatten(source):
                        for to_like in flatten(destination if isinstance(destination, tuple) else (destination,)):
                            edges.append(Edge(from_node=node_of(from_like), to_node=node_of(to_like), route=route))
                continue
            for from_like in flatten(source):
                for to_like in flatten(target):
                    edges.append(Edge(from_node=node_of(from_like), to_node=node_of(to_like)))
    return edges
