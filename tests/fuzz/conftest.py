import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzzing
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studyapp"))  # study_builders, journey_driver, test_bots
