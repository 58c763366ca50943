"""A host with plain APIView and GenericAPIView classes, routed by path() with names."""
