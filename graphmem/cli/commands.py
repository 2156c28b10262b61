"""The handlers of the ``graphmem`` subcommands, by the names they had when they all lived
here (each now sits in the module of its topic, beside the options it takes).

Example:
    >>> cmd_stats.__module__
    'graphmem.cli.file_commands'
"""

from __future__ import annotations

from .command import UsageError
from .database import default_db_path
from .declare_commands import cmd_declare, cmd_reanalyse, cmd_undeclare
from .demo_command import cmd_demo
from .file_commands import cmd_export, cmd_import, cmd_stats
from .graph_commands import cmd_entities, cmd_path, cmd_relabel, cmd_relations
from .memory_commands import cmd_context, cmd_ingest, cmd_search
from .viz_commands import cmd_export_graph, cmd_viz

__all__ = [
    "UsageError",
    "cmd_context",
    "cmd_declare",
    "cmd_demo",
    "cmd_entities",
    "cmd_export",
    "cmd_export_graph",
    "cmd_import",
    "cmd_ingest",
    "cmd_path",
    "cmd_reanalyse",
    "cmd_relabel",
    "cmd_relations",
    "cmd_search",
    "cmd_stats",
    "cmd_undeclare",
    "cmd_viz",
    "default_db_path",
]
