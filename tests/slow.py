"""The mark for tests that take a minute or more on CI's two cores: end-to-end campaigns in
fresh processes, every runtime started. The default run (README's test command) skips them;
.ci/run sets TOPKSPEC_SLOW_TESTS=1 and runs them all."""
import os

import pytest

SLOW = os.environ.get("TOPKSPEC_SLOW_TESTS") == "1"

slow = pytest.mark.skipif(not SLOW, reason="slow: .ci/run runs it (TOPKSPEC_SLOW_TESTS=1)")
