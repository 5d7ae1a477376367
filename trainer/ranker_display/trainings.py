"""A training job as its progress block shows it: status, phase, progress and its outcome in words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rankers.models import RankerVersion
from trainer.models import Training, TrainingStatus


@dataclass(frozen=True)
class TrainingView:
    """A training job as its progress block shows it."""

    training: Training
    # "v2 is the same model as v1 (the untrained fusion): …" (trainer.training_explanation), said first.
    same_model: str = ""

    @property
    def is_active(self) -> bool:
        return self.training.is_active

    @property
    def status(self) -> str:
        return self.training.status

    @property
    def status_label(self) -> str:
        return self.training.get_status_display()

    @property
    def phase_label(self) -> str:
        return self.training.get_phase_display()

    @property
    def percent(self) -> int:
        return max(0, min(100, round(100 * (self.training.progress or 0.0))))

    @property
    def since(self) -> datetime:
        return self.training.started_at or self.training.created_at

    @property
    def version(self) -> RankerVersion | None:
        return self.training.version

    @property
    def outcome(self) -> str:
        """Promoted v2: … / v2 not promoted: … / v2 waits for a trainer: … / Training failed: …"""
        training = self.training
        if training.status == TrainingStatus.FAILED:
            return f"Training failed: {training.error or 'no reason recorded.'}"
        if training.status != TrainingStatus.SUCCEEDED:
            return ""
        version = training.version
        label = version.label if version else "the new version"
        reason = training.decision_reason
        said = f"{self.same_model} " if self.same_model else ""
        if training.decision == "promoted":
            return f"{said}Promoted {label}: {reason}"
        if training.decision == "kept":
            # The reason itself says which version was kept ("… Kept v1; a new version is …").
            return f"{said}{label} not promoted: {reason}"
        if training.decision == "manual":
            return f"{said}{label} waits for a trainer to promote it: {reason}"
        return f"{said}Trained {label}." + (f" {reason}" if reason else "")
