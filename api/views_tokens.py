"""``/api/tokens/``: the caller's own API tokens (any collection) and revoking one; keys are never shown
again after they are made (on the tokens page)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.responses import AUTH_ERRORS, NOT_FOUND
from trainer.models import ApiToken
from trainer.selectors import tokens_of
from trainer.services import api_token_revoke_own


class ApiTokenSerializer(serializers.ModelSerializer):
    collection = serializers.CharField(source="collection.slug")
    key_prefix = serializers.CharField(
        help_text="The key's first 8 characters, to tell tokens apart; never the key."
    )
    expired = serializers.BooleanField(source="is_expired")

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "collection",
            "role",
            "key_prefix",
            "created_at",
            "last_used_at",
            "expires_at",
            "expired",
            "revoked",
        ]
        read_only_fields = fields


# --- views -------------------------------------------------------------------------------------------


class TokenListView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = ApiTokenSerializer

    @extend_schema(
        summary="The caller's own API tokens (any collection), newest first; keys are never shown again",
        responses={200: ApiTokenSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(tokens_of(user=request.user))
        return self.get_paginated_response(ApiTokenSerializer(page, many=True).data)


class TokenRevokeView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = ApiTokenSerializer

    @extend_schema(
        summary="Revoke one of the caller's own tokens (a token may revoke itself)",
        request=None,
        responses={200: ApiTokenSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = api_token_revoke_own(user=request.user, token_id=token_id)
        if token is None:
            raise NotFound(f"No token {token_id} of yours.")
        return Response(ApiTokenSerializer(token).data)
