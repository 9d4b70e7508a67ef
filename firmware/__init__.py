"""The sensor-board firmware (MicroPython), shipped inside the host package.

On a board these files are top-level modules (``import proto``); on the host
this folder is the package ``tablesense.firmware`` so that the host uses the
very same frame codec and ``tablesense flash`` finds the files to deploy. This
``__init__.py`` is never deployed to a board.
"""
