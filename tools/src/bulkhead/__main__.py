import sys

from bulkhead.cli import main

sys.exit(main())
