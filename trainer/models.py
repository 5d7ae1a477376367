"""What only the API needs: service credentials."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from corpus.models import Collection, Role


def _hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    """A service credential scoped to one collection and a role. Only a hash of the key is stored."""

    name = models.CharField(max_length=200)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="api_tokens")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.RATER)
    # The user the token acts as (ratings it posts are recorded under this user).
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key_prefix = models.CharField(max_length=8)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(role__in=Role.values), name="api_token_role_valid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…, {self.role} of {self.collection})"

    @staticmethod
    def generate_key() -> str:
        return secrets.token_hex(20)

    @staticmethod
    def hash_key(key: str) -> str:
        return _hash_token(key)
