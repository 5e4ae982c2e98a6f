"""The file system under the snapshots and the results folder: atomic writes of one file
or a pair (``files.py``) and every folder of a write opened without following a link
(``nofollow.py``). It sits below every other room of ``snapshots/`` and imports none."""
